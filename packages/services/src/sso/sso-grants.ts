// Single sign-on: the identity provider says which groups a user is in; the mapping (table
// sso_group_mappings, edited by admins) says what each group grants — a role, and optionally
// membership of a team. A user gets the highest role any of their groups grants and every team
// any of them grants; groups that map to nothing grant nothing, and no grant at all means no access.
import type { Prisma, PrismaClient } from "@sluice/db";
import { recordAuditEvent, type TAuditOrigin } from "../audit/record-audit-event";
import type { TActorTeam } from "../auth/actor";
import { hasRole, type TRole } from "../auth/roles";

export interface TSsoGrants {
  /** null: none of the groups is mapped (the user gets the "no access" page). */
  role: TRole | null;
  teams: TActorTeam[];
}

/** The groups in an ID token / userinfo claim: an array of strings, or one space- or comma-separated string. */
export function groupsFromClaim(value: unknown): string[] {
  const raw = Array.isArray(value) ? value : typeof value === "string" ? value.split(/[\s,]+/) : [];
  return [
    ...new Set(
      raw
        .filter((g): g is string => typeof g === "string")
        .map((g) => g.trim())
        .filter((g) => g.length > 0 && g.length <= 256),
    ),
  ].slice(0, 500);
}

export async function resolveSsoGrants(
  db: PrismaClient | Prisma.TransactionClient,
  groups: string[],
): Promise<TSsoGrants> {
  if (groups.length === 0) return { role: null, teams: [] };
  const rows = await db.ssoGroupMapping.findMany({
    where: { group: { in: groups } },
    select: { role: true, team: { select: { id: true, slug: true, name: true } } },
  });
  let role: TRole | null = null;
  const teams = new Map<string, TActorTeam>();
  for (const row of rows) {
    if (!role || hasRole(row.role, role)) role = row.role;
    if (row.team) teams.set(row.team.id, row.team);
  }
  return { role, teams: [...teams.values()].sort((a, b) => a.name.localeCompare(b.name)) };
}

/**
 * Bring an SSO user in line with their groups at sign-in: the role they grant, and the teams they
 * grant (memberships an admin gave by hand are kept; ones an earlier sign-in gave are removed when
 * no group grants them any more). Recorded in the audit log when anything changed.
 */
export async function applySsoGrants(
  db: PrismaClient,
  userId: string,
  groups: string[],
  from: TAuditOrigin,
): Promise<TSsoGrants> {
  return db.$transaction(async (tx) => {
    const grants = await resolveSsoGrants(tx, groups);
    const user = await tx.user.findUniqueOrThrow({
      where: { id: userId },
      select: {
        email: true,
        role: true,
        memberships: { select: { teamId: true, source: true, team: { select: { slug: true } } } },
      },
    });
    if (!grants.role) return grants;
    const granted = new Set(grants.teams.map((t) => t.id));
    const have = new Set(user.memberships.map((m) => m.teamId));
    const add = grants.teams.filter((t) => !have.has(t.id));
    const remove = user.memberships.filter((m) => m.source === "sso" && !granted.has(m.teamId));
    if (user.role !== grants.role)
      await tx.user.update({ where: { id: userId }, data: { role: grants.role } });
    if (add.length > 0)
      await tx.teamMember.createMany({ data: add.map((t) => ({ teamId: t.id, userId, source: "sso" })) });
    if (remove.length > 0)
      await tx.teamMember.deleteMany({ where: { userId, teamId: { in: remove.map((m) => m.teamId) } } });
    if (user.role !== grants.role || add.length > 0 || remove.length > 0) {
      const teamsBefore = user.memberships.map((m) => m.team.slug).sort();
      const teamsAfter = [
        ...teamsBefore.filter((s) => !remove.some((m) => m.team.slug === s)),
        ...add.map((t) => t.slug),
      ].sort();
      await recordAuditEvent(tx, {
        actorUserId: null,
        actor: "system:sso",
        action: "user.sso_sync",
        target: { type: "user", id: userId, label: user.email },
        reason: `groups at sign-in: ${groups.join(", ") || "(none)"}`,
        before: { role: user.role, teams: teamsBefore },
        after: { role: grants.role, teams: teamsAfter },
        from,
      });
    }
    return grants;
  });
}
