// The Admin page's people: every user with role, teams, how they sign in, whether disabled, and how
// many browsers are signed in as them. Never a password hash or token.
import type { PrismaClient } from "@sluice/db";
import type { TRole } from "../auth/roles";

export interface TAdminUser {
  id: string;
  email: string;
  name: string;
  role: TRole;
  disabled: boolean;
  teams: { id: string; slug: string; name: string; source: string }[];
  signsInWith: ("password" | "sso")[];
  ssoGroups: string[];
  activeSessions: number;
  createdAt: Date;
}

export async function findUsers(db: PrismaClient): Promise<TAdminUser[]> {
  const now = new Date();
  const rows = await db.user.findMany({
    orderBy: { email: "asc" },
    select: {
      id: true,
      email: true,
      name: true,
      role: true,
      disabledAt: true,
      ssoGroups: true,
      createdAt: true,
      memberships: {
        select: { source: true, team: { select: { id: true, slug: true, name: true } } },
        orderBy: { team: { name: "asc" } },
      },
      accounts: { select: { providerId: true } },
      _count: { select: { sessions: { where: { expiresAt: { gt: now } } } } },
    },
  });
  return rows.map((u) => ({
    id: u.id,
    email: u.email,
    name: u.name,
    role: u.role,
    disabled: u.disabledAt !== null,
    teams: u.memberships.map((m) => ({ ...m.team, source: m.source })),
    signsInWith: [
      ...new Set(
        u.accounts.map((a) => (a.providerId === "credential" ? "password" : "sso") as "password" | "sso"),
      ),
    ].sort(),
    ssoGroups: u.ssoGroups,
    activeSessions: u._count.sessions,
    createdAt: u.createdAt,
  }));
}
