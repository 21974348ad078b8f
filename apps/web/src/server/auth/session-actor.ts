// The signed-in actor behind a request: the library finds the session row for the cookie (none after
// sign-out, a password change or disabling), then the user with role and teams comes from Postgres.
import type { PrismaClient } from "@sluice/db";
import { getActor, type TActor } from "@sluice/services";
import type { TAuth } from "./create-auth";

export async function sessionActor(auth: TAuth, db: PrismaClient, headers: Headers): Promise<TActor | null> {
  const session = await auth.api.getSession({ headers }).catch(() => null);
  return session ? getActor(db, session.user.id) : null;
}
