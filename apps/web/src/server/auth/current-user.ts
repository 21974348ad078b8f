// The signed-in user for Server Components.
import "server-only";
import type { TActor } from "@sluice/services";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { db } from "../db";
import { auth } from "./auth";
import { sessionActor } from "./session-actor";

export async function getCurrentUser(): Promise<TActor | null> {
  return sessionActor(auth(), db(), await headers());
}

/** The signed-in user, or a redirect to /sign-in (which returns here afterwards). */
export async function requireUser(returnTo: string): Promise<TActor> {
  const user = await getCurrentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(returnTo)}`);
  return user;
}
