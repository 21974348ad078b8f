// The user a session cookie points at. Looked up on every request (not trusted from the cookie) so
// a role change or a deleted account takes effect immediately.
import type { PrismaClient } from "@sluice/db";
import type { TRole } from "../auth/roles";

export interface TSessionUser {
  id: string;
  email: string;
  name: string;
  role: TRole;
}

export async function getSessionUser(db: PrismaClient, userId: string): Promise<TSessionUser | null> {
  return db.user.findUnique({
    where: { id: userId },
    select: { id: true, email: true, name: true, role: true },
  });
}
