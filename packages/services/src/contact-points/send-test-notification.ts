// "Send test notification" on the Admin page: a made-up info-level alert, marked as a test, sent now
// from the console to one contact point through the same code as real pages, and recorded in that
// contact point's delivery history with the receiver's answer — so an admin sees at once whether the
// URL, routing key or mailbox works. It is not retried: the answer is what the admin came for. Note
// the console resolves environment-variable secrets in its own environment (as the watchdog does).
import { z } from "zod";
import type { Prisma, PrismaClient } from "@sluice/db";
import { AdminChangeError, auditAdminChange, type TAdminContext } from "../admin/admin-change";
import { testFacts } from "../alerts/notification-facts";
import type { TContactPointKind } from "./contact-point-kinds";
import { sendToContactPoint, type TSendOptions } from "./send-to-contact-point";

export const ZSendTestNotificationInput = z.object({
  id: z.string().min(1, "Which contact point?").max(100),
});

export async function sendTestNotification(
  db: PrismaClient,
  ctx: TAdminContext,
  input: z.input<typeof ZSendTestNotificationInput>,
  opts: TSendOptions,
): Promise<{ delivered: boolean; error: string | null; status: number | null }> {
  const { id } = ZSendTestNotificationInput.parse(input);
  const cp = await db.contactPoint.findUnique({
    where: { id },
    include: { team: { select: { name: true, slug: true } } },
  });
  if (!cp)
    throw new AdminChangeError("No such contact point (removed meanwhile?); reload the page.", "not_found");
  const now = new Date();
  const facts = testFacts(cp.team.name, ctx.actor.email, now);
  const dedupKey = `test:${cp.id}:${now.getTime()}`;
  const result = await sendToContactPoint(
    { ...cp, kind: cp.kind as TContactPointKind, teamSlug: cp.team.slug },
    facts,
    dedupKey,
    opts,
  );
  await db.$transaction(async (tx) => {
    await tx.alertNotification.create({
      data: {
        teamId: cp.teamId,
        contactPointId: cp.id,
        kind: "test",
        dedupKey,
        status: result.ok ? "delivered" : "failed",
        attempts: 1,
        lastAttemptAt: now,
        lastStatusCode: result.status,
        lastError: result.ok ? null : result.error.slice(0, 2000),
        lastResponse: result.ok ? null : (result.response?.slice(0, 300) ?? null),
        deliveredAt: result.ok ? new Date() : null,
        payload: facts as unknown as Prisma.InputJsonValue,
      },
    });
    await auditAdminChange(tx, ctx, {
      action: "team.contact_point_test",
      target: { type: "team", id: cp.teamId, label: cp.team.slug },
      reason: `${cp.name}: ${result.ok ? "delivered" : result.error.slice(0, 300)}`,
    });
  });
  return result.ok
    ? { delivered: true, error: null, status: result.status }
    : // An admin sent it (the Admin page): the receiver's answer is theirs to see.
      {
        delivered: false,
        error: result.response ? `${result.error} — the receiver said: ${result.response}` : result.error,
        status: result.status,
      };
}
