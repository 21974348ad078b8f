// The console's side of authorization: it asks @sluice/services (the one decision, see
// packages/services/src/auth/authorize-action.ts) and turns a refusal into the tRPC error the browser
// gets — UNAUTHORIZED (401: sign in), FORBIDDEN (403: not your role or team), NOT_FOUND.
import {
  authorizeAction,
  decideActionRole,
  decideRole,
  type TAction,
  type TActor,
  type TRole,
  type TTargetRef,
} from "@sluice/services";
import type { PrismaClient } from "@sluice/db";
import { TRPCError } from "@trpc/server";

type TRefusal = { code: "UNAUTHENTICATED" | "FORBIDDEN" | "NOT_FOUND"; message: string };

function refuse(decision: TRefusal): never {
  throw new TRPCError({
    code: decision.code === "UNAUTHENTICATED" ? "UNAUTHORIZED" : decision.code,
    message: decision.message,
  });
}

export function requireRole(user: TActor | null, minRole: TRole): TActor {
  const decision = decideRole(user, minRole);
  if (!decision.ok) refuse(decision);
  return decision.actor;
}

/** Before the input is read: could this role do the action at all (to some pipeline)? */
export function requireActionRole(user: TActor | null, action: TAction): TActor {
  const decision = decideActionRole(user, action);
  if (decision === "needs-target") return user!;
  if (!decision.ok) refuse(decision);
  return decision.actor;
}

export async function requireActionFor(
  db: PrismaClient,
  user: TActor | null,
  action: TAction,
  target: TTargetRef,
): Promise<TActor> {
  const decision = await authorizeAction(db, user, action, target);
  if (!decision.ok) refuse(decision);
  return decision.actor;
}
