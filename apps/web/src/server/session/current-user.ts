// The signed-in user for Server Components. The cookie proves identity; the role comes from Postgres.
import "server-only";
import { getSessionUser, type TSessionUser } from "@sluice/services";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { db } from "../db";
import { SESSION_COOKIE } from "./session-cookie";
import { readSessionClaims } from "./session";

export async function getCurrentUser(): Promise<TSessionUser | null> {
  const claims = readSessionClaims((await cookies()).get(SESSION_COOKIE)?.value);
  return claims ? getSessionUser(db(), claims.userId) : null;
}

/** The signed-in user, or a redirect to /sign-in (which returns here afterwards). */
export async function requireUser(returnTo: string): Promise<TSessionUser> {
  const user = await getCurrentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(returnTo)}`);
  return user;
}
