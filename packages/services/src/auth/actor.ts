// Who is acting: a user with their role and teams, as the authorization decision needs them. Read
// from Postgres on every request (console) and every command (CLI), so a role change, a team change
// or disabling the user takes effect at once. A disabled user is no actor at all.
import type { PrismaClient } from "@sluice/db";
import type { TRole } from "./roles";

export interface TActorTeam {
  id: string;
  slug: string;
  name: string;
}

export interface TActor {
  id: string;
  email: string;
  name: string;
  role: TRole;
  teams: TActorTeam[];
}

const SELECT = {
  id: true,
  email: true,
  name: true,
  role: true,
  disabledAt: true,
  memberships: {
    select: { team: { select: { id: true, slug: true, name: true } } },
    orderBy: { team: { name: "asc" } },
  },
} as const;

type TRow = {
  id: string;
  email: string;
  name: string;
  role: TRole;
  disabledAt: Date | null;
  memberships: { team: TActorTeam }[];
};

function toActor(row: TRow | null): TActor | null {
  if (!row || row.disabledAt) return null;
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    teams: row.memberships.map((m) => m.team),
  };
}

export async function getActor(db: PrismaClient, userId: string): Promise<TActor | null> {
  return toActor(await db.user.findUnique({ where: { id: userId }, select: SELECT }));
}

/** The CLI's actor (SLUICE_ACTOR / --as): distinguishes "no such user" from "disabled" for its message. */
export async function getActorByEmail(
  db: PrismaClient,
  email: string,
): Promise<{ actor: TActor } | { missing: true } | { disabled: true }> {
  const row = await db.user.findUnique({ where: { email: email.trim().toLowerCase() }, select: SELECT });
  if (!row) return { missing: true };
  if (row.disabledAt) return { disabled: true };
  return { actor: toActor(row)! };
}
