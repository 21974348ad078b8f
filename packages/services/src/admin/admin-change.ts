// What every admin change shares: who does it (the actor and where from), refusals an admin can act
// on, the audit event recorded in the change's own transaction, and signing a user out everywhere.
import { randomBytes } from "node:crypto";
import type { Prisma } from "@sluice/db";
import { recordAuditEvent, type TAuditOrigin } from "../audit/record-audit-event";
import type { TActor } from "../auth/actor";
import { ServiceError } from "../service-error";

export interface TAdminContext {
  /**
   * A signed-in admin — or, only while an install has no admin at all, whoever holds its database
   * (`sluice users create` creating the first admin): no user id, a label for the audit log.
   */
  actor: TActor | TBootstrapActor;
  from: TAuditOrigin;
}

export interface TBootstrapActor {
  id: null;
  email: string;
}

/** A change that cannot be made as asked; `kind` picks the HTTP-ish answer at the edge. */
export class AdminChangeError extends ServiceError {
  declare readonly kind: "not_found" | "conflict" | "invalid";
}

export async function auditAdminChange(
  tx: Prisma.TransactionClient,
  ctx: TAdminContext,
  event: {
    action: string;
    target: { type: string; id: string; label: string };
    reason?: string;
    before?: unknown;
    after?: unknown;
  },
): Promise<void> {
  await recordAuditEvent(tx, { actorUserId: ctx.actor.id, actor: ctx.actor.email, ...event, from: ctx.from });
}

/** Every session of the user ends now (their cookies, copies included, stop working). */
export async function signOutEverywhere(tx: Prisma.TransactionClient, userId: string): Promise<number> {
  return (await tx.session.deleteMany({ where: { userId } })).count;
}

/** A one-time password for a new or reset account, shown once to the admin (letters and digits, 16). */
export function generatePassword(): string {
  return randomBytes(12).toString("base64url").replace(/[-_]/g, "x").slice(0, 16);
}

/** The last enabled admin cannot be demoted or disabled: someone must be able to manage people. */
export async function assertAnotherAdmin(
  tx: Prisma.TransactionClient,
  userId: string,
  what: string,
): Promise<void> {
  const others = await tx.user.count({ where: { role: "admin", disabledAt: null, id: { not: userId } } });
  if (others === 0)
    throw new AdminChangeError(
      `Cannot ${what}: they are the only enabled admin. Make someone else an admin first.`,
      "conflict",
    );
}
