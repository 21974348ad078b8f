"use client";
// The single sign-on mapping: identity-provider group → role (and optionally a team). Applied at each
// user's next single sign-on; groups mapped to nothing grant nothing.
import type { TRole } from "@sluice/services";
import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useTRPC } from "@/trpc/react";
import { Outcome, RoleField, TeamField, useAdminRefresh, useMutation, useOutcome } from "./admin-controls";

export function SsoSection({
  configured,
  roles,
}: {
  configured: { issuer: string; groupsClaim: string } | null;
  roles: TRole[];
}) {
  const trpc = useTRPC();
  const refresh = useAdminRefresh();
  const { outcome, ok, fail } = useOutcome();
  const mappings = useQuery(trpc.admin.ssoMappings.queryOptions());
  const teams = useQuery(trpc.admin.teams.queryOptions());
  const [group, setGroup] = useState("");
  const [role, setRole] = useState<TRole>("viewer");
  const [teamId, setTeamId] = useState("");
  const create = useMutation(
    trpc.admin.createSsoMapping.mutationOptions({
      onSuccess: () => (ok(`Group ${group} mapped.`), setGroup("")),
      onError: fail,
      onSettled: refresh,
    }),
  );
  const remove = useMutation(
    trpc.admin.deleteSsoMapping.mutationOptions({
      onSuccess: () => ok("Mapping removed."),
      onError: fail,
      onSettled: refresh,
    }),
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ group, role, teamId: teamId || null });
  };
  return (
    <section className="panel" data-testid="admin-sso">
      <h2 className="panel__title">Single sign-on</h2>
      <p className="muted small">
        {configured ? (
          <>
            Signing in with <span className="mono">{configured.issuer}</span> is on. A user gets the highest
            role any of their groups (claim <code>{configured.groupsClaim}</code>) maps to, and every team
            those rows name; a user whose groups map to nothing sees a &quot;no access&quot; page. Changes
            apply at each user&apos;s next sign-in.
          </>
        ) : (
          <>
            Single sign-on is not configured (set SLUICE_SSO_ISSUER, SLUICE_SSO_CLIENT_ID and
            SLUICE_SSO_CLIENT_SECRET); the mapping below is kept for when it is.
          </>
        )}
      </p>
      <table className="table table--compact">
        <thead>
          <tr>
            <th>Group</th>
            <th>Role</th>
            <th>Team</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(mappings.data ?? []).map((m) => (
            <tr key={m.id} data-testid={`sso-${m.group}`}>
              <td className="mono">{m.group}</td>
              <td>
                <span className={`role role--${m.role}`}>{m.role}</span>
              </td>
              <td>{m.team?.name ?? <span className="muted">no team (role only)</span>}</td>
              <td>
                <button
                  className="button button--small"
                  type="button"
                  disabled={remove.isPending}
                  onClick={() => remove.mutate({ id: m.id })}
                >
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form className="admin-form" onSubmit={submit} noValidate aria-label="Map a group">
        <label>
          <span>Group</span>
          <input value={group} onChange={(e) => setGroup(e.target.value)} placeholder="payments-engineers" />
        </label>
        <RoleField roles={roles} value={role} onChange={setRole} />
        <TeamField teams={teams.data ?? []} value={teamId} onChange={setTeamId} none="no team (role only)" />
        <button className="button button--small" type="submit" disabled={create.isPending}>
          Map group
        </button>
      </form>
      <Outcome outcome={outcome} />
    </section>
  );
}
