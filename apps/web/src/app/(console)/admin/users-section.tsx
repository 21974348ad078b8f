"use client";
// People: create (invite) a user, change a role, disable or enable, reset a password. A generated
// one-time password is shown once, here, for the admin to hand over.
import type { TAdminUser, TRole } from "@sluice/services";
import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useTRPC } from "@/trpc/react";
import { Outcome, RoleField, TeamField, useAdminRefresh, useMutation, useOutcome } from "./admin-controls";
import { WhyDisabled } from "@/components/why-disabled";

/** `roles`: the role ladder, from the server (a client bundle must not import the services package). */
export function UsersSection({ selfId, roles }: { selfId: string; roles: TRole[] }) {
  const trpc = useTRPC();
  const users = useQuery(trpc.admin.users.queryOptions());
  const teams = useQuery(trpc.admin.teams.queryOptions());
  return (
    <section className="panel" data-testid="admin-users">
      <h2 className="panel__title">People</h2>
      <CreateUser teams={teams.data ?? []} roles={roles} />
      {users.isPending ? (
        <p className="muted">Loading people…</p>
      ) : users.isError ? (
        <p className="form__error" role="alert">
          Could not load people: {users.error.message}
        </p>
      ) : (
        <table className="table table--compact">
          <thead>
            <tr>
              <th>Person</th>
              <th>Role</th>
              <th>Teams</th>
              <th>Signs in with</th>
              <th className="num">Sessions</th>
              <th>Actions</th>
            </tr>
          </thead>
          <tbody>
            {users.data.map((u) => (
              <UserRow key={u.id} user={u} self={u.id === selfId} roles={roles} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function UserRow({ user, self, roles }: { user: TAdminUser; self: boolean; roles: TRole[] }) {
  const trpc = useTRPC();
  const refresh = useAdminRefresh();
  const { outcome, ok, fail } = useOutcome();
  const setRole = useMutation(
    trpc.admin.setRole.mutationOptions({
      onSuccess: (r) => ok(r.changed ? "Role changed." : "No change."),
      onError: fail,
      onSettled: refresh,
    }),
  );
  const setDisabled = useMutation(
    trpc.admin.setDisabled.mutationOptions({
      onSuccess: (r, v) =>
        ok(
          v.disabled ? `Disabled; ${r.sessionsEnded} session(s) ended.` : "Enabled: they can sign in again.",
        ),
      onError: fail,
      onSettled: refresh,
    }),
  );
  const reset = useMutation(
    trpc.admin.resetPassword.mutationOptions({
      onSuccess: (r) =>
        ok(
          `New one-time password: ${r.oneTimePassword} — hand it over; it is not shown again. ${r.sessionsEnded} session(s) ended.`,
        ),
      onError: fail,
      onSettled: refresh,
    }),
  );
  return (
    <tr data-testid={`user-${user.email}`}>
      <td>
        <div className="strong">{user.name}</div>
        <div className="muted small">{user.email}</div>
        {user.disabled ? <span className="badge badge--bad">disabled</span> : null}
        <Outcome outcome={outcome} />
      </td>
      <td>
        <select
          aria-label={`Role of ${user.email}`}
          value={user.role}
          disabled={setRole.isPending}
          onChange={(e) => setRole.mutate({ userId: user.id, role: e.target.value as TRole })}
        >
          {roles.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </td>
      <td className="small">
        {user.teams.length > 0 ? (
          user.teams.map((t) => `${t.name}${t.source === "sso" ? " (SSO)" : ""}`).join(", ")
        ) : (
          <span className="muted">none</span>
        )}
      </td>
      <td className="small">
        {user.signsInWith.join(", ") || <span className="muted">nothing yet</span>}
        {user.ssoGroups.length > 0 ? <div className="muted">groups: {user.ssoGroups.join(", ")}</div> : null}
      </td>
      <td className="num">{user.activeSessions}</td>
      <td>
        <button
          className="button button--small"
          type="button"
          disabled={self || setDisabled.isPending}
          aria-describedby={self ? `self-${user.id}` : undefined}
          onClick={() => setDisabled.mutate({ userId: user.id, disabled: !user.disabled })}
        >
          {user.disabled ? "Enable" : "Disable"}
        </button>{" "}
        <button
          className="button button--small"
          type="button"
          disabled={reset.isPending}
          onClick={() => reset.mutate({ userId: user.id })}
        >
          Reset password
        </button>
        <WhyDisabled id={`self-${user.id}`} reason={self ? "You cannot disable yourself." : null} />
      </td>
    </tr>
  );
}

function CreateUser({ teams, roles }: { teams: { id: string; name: string }[]; roles: TRole[] }) {
  const trpc = useTRPC();
  const refresh = useAdminRefresh();
  const { outcome, ok, fail } = useOutcome();
  const [email, setEmail] = useState("");
  const [name, setName] = useState("");
  const [role, setRole] = useState<TRole>("viewer");
  const [teamId, setTeamId] = useState("");
  const [ssoOnly, setSsoOnly] = useState(false);
  const create = useMutation(
    trpc.admin.createUser.mutationOptions({
      onSuccess: (r) => {
        ok(
          r.oneTimePassword
            ? `Created ${r.email}. One-time password: ${r.oneTimePassword} — hand it over; it is not shown again.`
            : `Created ${r.email}; they sign in with single sign-on.`,
        );
        setEmail("");
        setName("");
      },
      onError: fail,
      onSettled: refresh,
    }),
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({
      email,
      name,
      role,
      teamIds: teamId ? [teamId] : [],
      password: ssoOnly ? "none" : "generate",
    });
  };
  return (
    <form className="admin-form" onSubmit={submit} noValidate aria-label="Add a person">
      <label>
        <span>Email</span>
        <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} />
      </label>
      <label>
        <span>Name</span>
        <input value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <RoleField roles={roles} value={role} onChange={setRole} />
      <TeamField teams={teams} value={teamId} onChange={setTeamId} none="none" />
      <label className="admin-form__check">
        <input type="checkbox" checked={ssoOnly} onChange={(e) => setSsoOnly(e.target.checked)} /> single
        sign-on only (no password)
      </label>
      <button className="button button--primary" type="submit" disabled={create.isPending}>
        Add person
      </button>
      <Outcome outcome={outcome} />
    </form>
  );
}
