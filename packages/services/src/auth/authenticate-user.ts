// Email + password sign-in. Returns the user without its password hash, or null: callers show one
// message for "no such user" and "wrong password" so the form does not reveal which emails exist.
import type { PrismaClient } from "@sluice/db";
import { hashPassword, verifyPassword } from "./password";
import type { TSessionUser } from "../users/get-session-user";

// Verified when the email is unknown, so both failure paths cost one scrypt and take as long.
let decoyHash: Promise<string> | undefined;

export async function authenticateUser(
  db: PrismaClient,
  input: { email: string; password: string },
): Promise<TSessionUser | null> {
  const user = await db.user.findUnique({ where: { email: input.email.trim().toLowerCase() } });
  if (!user) {
    decoyHash ??= hashPassword("decoy-password-never-matches");
    await verifyPassword(input.password, await decoyHash);
    return null;
  }
  if (!(await verifyPassword(input.password, user.passwordHash))) return null;
  return { id: user.id, email: user.email, name: user.name, role: user.role };
}
