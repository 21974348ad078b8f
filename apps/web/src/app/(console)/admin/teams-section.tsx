"use client";
// Teams: members (owners are members whose role is owner: they change the team's pipelines), the
// on-call email, the contact points its alerts page (contact-points.tsx), and a new team.
import type { TAdminTeam } from "@sluice/services";
import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useTRPC } from "@/trpc/react";
import { Outcome, useAdminRefresh, useMutation, useOutcome } from "./admin-controls";
import { ContactPoints } from "./contact-points";

export function TeamsSection() {
  const trpc = useTRPC();
  const teams = useQuery(trpc.admin.teams.queryOptions());
  const users = useQuery(trpc.admin.users.queryOptions());
  return (
    <section className="panel" data-testid="admin-teams">
      <h2 className="panel__title">Teams</h2>
      <p className="muted small">
        A pipeline belongs to the team its spec names as <code>owner</code>. Members with the owner role
        change that team&apos;s pipelines; operators run every pipeline. A pipeline&apos;s alerts page every
        enabled contact point of its team.
      </p>
      {teams.isPending ? (
        <p className="muted">Loading teams…</p>
      ) : teams.isError ? (
        <p className="form__error" role="alert">
          Could not load teams: {teams.error.message}
        </p>
      ) : (
        teams.data.map((t) => <TeamCard key={t.id} team={t} people={users.data ?? []} />)
      )}
      <CreateTeam />
    </section>
  );
}

function TeamCard({ team, people }: { team: TAdminTeam; people: { id: string; email: string }[] }) {
  const trpc = useTRPC();
  const refresh = useAdminRefresh();
  const { outcome, ok, fail } = useOutcome();
  const [add, setAdd] = useState("");
  const member = useMutation(
    trpc.admin.setTeamMember.mutationOptions({
      onSuccess: (r, v) => ok(r.changed ? (v.member ? "Added." : "Removed.") : "No change."),
      onError: fail,
      onSettled: refresh,
    }),
  );
  const candidates = people.filter((p) => !team.members.some((m) => m.userId === p.id));
  const owners = team.members.filter((m) => m.owner);
  return (
    <div className="admin-team" data-testid={`team-${team.slug}`}>
      <div className="webhook__head">
        <span className="strong">{team.name}</span>
        <span className="muted small mono">{team.slug}</span>
        <span className="muted small">{team.pipelineCount} pipeline(s)</span>
      </div>
      <p className="small">
        Owners:{" "}
        {owners.length > 0 ? (
          owners.map((m) => m.name).join(", ")
        ) : (
          <span className="warn">none — only operators and admins can change this team&apos;s pipelines</span>
        )}
      </p>
      <table className="table table--compact">
        <thead>
          <tr>
            <th>Member</th>
            <th>Role</th>
            <th>Added by</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {team.members.map((m) => (
            <tr key={m.userId}>
              <td>
                {m.name} <span className="muted small">{m.email}</span>
              </td>
              <td>
                <span className={`role role--${m.role}`}>{m.role}</span>
              </td>
              <td className="small">{m.source === "sso" ? "single sign-on mapping" : "an admin"}</td>
              <td>
                <button
                  className="button button--small"
                  type="button"
                  disabled={member.isPending}
                  onClick={() => member.mutate({ teamId: team.id, userId: m.userId, member: false })}
                >
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="admin-form">
        <label>
          <span>Add a member</span>
          <select
            aria-label={`Add a member to ${team.name}`}
            value={add}
            onChange={(e) => setAdd(e.target.value)}
          >
            <option value="">choose a person</option>
            {candidates.map((p) => (
              <option key={p.id} value={p.id}>
                {p.email}
              </option>
            ))}
          </select>
        </label>
        <button
          className="button button--small"
          type="button"
          disabled={!add || member.isPending}
          onClick={() => member.mutate({ teamId: team.id, userId: add, member: true })}
        >
          Add
        </button>
      </div>
      <OnCall team={team} />
      <ContactPoints teamId={team.id} teamName={team.name} points={team.contactPoints} />
      <Outcome outcome={outcome} />
    </div>
  );
}

function OnCall({ team }: { team: TAdminTeam }) {
  const trpc = useTRPC();
  const refresh = useAdminRefresh();
  const { outcome, ok, fail } = useOutcome();
  const [email, setEmail] = useState(team.onCallEmail ?? "");
  const save = useMutation(
    trpc.admin.setOnCall.mutationOptions({
      onSuccess: () => ok("On-call email saved."),
      onError: fail,
      onSettled: refresh,
    }),
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate({ teamId: team.id, onCallEmail: email });
  };
  return (
    <form className="admin-form" onSubmit={submit} noValidate aria-label={`On-call email of ${team.name}`}>
      <label>
        <span>On-call email (shown beside its alerts)</span>
        <input
          type="email"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          placeholder="team-oncall@example.com"
        />
      </label>
      <button className="button button--small" type="submit" disabled={save.isPending}>
        Save on-call email
      </button>
      <Outcome outcome={outcome} />
    </form>
  );
}

function CreateTeam() {
  const trpc = useTRPC();
  const refresh = useAdminRefresh();
  const { outcome, ok, fail } = useOutcome();
  const [slug, setSlug] = useState("");
  const [name, setName] = useState("");
  const create = useMutation(
    trpc.admin.createTeam.mutationOptions({
      onSuccess: () => ok(`Team ${slug} created.`),
      onError: fail,
      onSettled: refresh,
    }),
  );
  return (
    <form
      className="admin-form"
      aria-label="Add a team"
      noValidate
      onSubmit={(e) => (e.preventDefault(), create.mutate({ slug, name }))}
    >
      <label>
        <span>New team id</span>
        <input value={slug} onChange={(e) => setSlug(e.target.value)} placeholder="payments-data" />
      </label>
      <label>
        <span>Name</span>
        <input value={name} onChange={(e) => setName(e.target.value)} placeholder="Payments Data" />
      </label>
      <button className="button button--small" type="submit" disabled={create.isPending}>
        Add team
      </button>
      <Outcome outcome={outcome} />
    </form>
  );
}
