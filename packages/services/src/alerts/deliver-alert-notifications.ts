// Delivers the outbox: due notifications are claimed (attempts + 1, next attempt pushed out, so two
// deliverers never send the same row at once), sent to their contact point in its own format
// (contact-points/send-to-contact-point.ts), and recorded — delivered; or the error, retried with
// exponential backoff (or after the receiver's Retry-After); or failed for good, at once when the
// receiver refused the request itself (retrying cannot fix it) or after MAX_ATTEMPTS. Every attempt's
// answer is on the Alerts and Admin pages. At-least-once: a process killed between the receiver's
// answer and the record sends once more with the same dedup key (PagerDuty's dedup_key, the
// webhook's Idempotency-Key / X-Sluice-Notification), so a receiver can drop the repeat.
import { rowsOf, sql, tables, type PrismaClient } from "@sluice/db";
import { retryDelayMs } from "@sluice/retry-policy";
import { sendToContactPoint, type TSendOptions } from "../contact-points/send-to-contact-point";
import type { TContactPointKind } from "../contact-points/contact-point-kinds";
import type { TNotificationFacts } from "./notification-facts";

export const MAX_ATTEMPTS = 8;
const CLAIM_MS = 60_000;

export interface TDeliveryOptions extends TSendOptions {
  /** Delay before retry n (1-based): base·2^(n−1), capped at 10 minutes. */
  retryBaseMs?: number;
  limit?: number;
  /** Only notifications of these rule kinds (the console's watchdog delivers its own only). */
  ruleKinds?: readonly string[];
}

/** No jitter: a retry is a row due at a time in Postgres, which one deliverer claims (SKIP LOCKED). */
export function notificationRetryDelay(attempt: number, baseMs: number): number {
  return retryDelayMs({ baseMs, capMs: 600_000 }, attempt);
}

export async function deliverAlertNotifications(
  db: PrismaClient,
  opts: TDeliveryOptions,
): Promise<{ delivered: number; retrying: number; failed: number }> {
  const baseMs = opts.retryBaseMs ?? 5_000;
  const ruleKinds = opts.ruleKinds ?? null;
  const claimed = await rowsOf(
    db,
    tables
      .updateTable("alert_notifications")
      .set((eb) => ({
        attempts: eb("attempts", "+", 1),
        last_attempt_at: sql<Date>`now()`,
        next_attempt_at: sql<Date>`now() + ${CLAIM_MS}::int * interval '1 millisecond'`,
      }))
      .where("id", "in", (eb) =>
        eb
          .selectFrom("alert_notifications as n")
          .select("n.id")
          .where("n.status", "=", "pending")
          .where("n.next_attempt_at", "<=", sql<Date>`now()`)
          .where((eb) =>
            eb.or([
              eb(sql`${ruleKinds}::text[]`, "is", null),
              eb(
                "n.episode_id",
                "in",
                eb
                  .selectFrom("alert_episodes as e")
                  .innerJoin("alert_rules as r", "r.id", "e.rule_id")
                  .select("e.id")
                  .where("r.kind", "=", sql<string>`ANY(${ruleKinds}::text[])`),
              ),
            ]),
          )
          .orderBy("n.id")
          .limit(opts.limit ?? 20)
          .forUpdate("n")
          .skipLocked(),
      )
      .returning(["id", "attempts", "payload", "dedup_key", "contact_point_id"]),
  );
  const counts = { delivered: 0, retrying: 0, failed: 0 };
  if (claimed.length === 0) return counts;
  const ids = [...new Set(claimed.flatMap((c) => (c.contact_point_id ? [c.contact_point_id] : [])))];
  const points = new Map(
    (
      await db.contactPoint.findMany({
        where: { id: { in: ids } },
        include: { team: { select: { slug: true } } },
      })
    ).map((c) => [c.id, c]),
  );
  // One at a time, in queue order: a fire goes out before its acknowledge and its resolve.
  for (const n of claimed) {
    const cp = n.contact_point_id ? points.get(n.contact_point_id) : undefined;
    const result = cp
      ? await sendToContactPoint(
          { ...cp, kind: cp.kind as TContactPointKind, teamSlug: cp.team.slug },
          n.payload as TNotificationFacts,
          n.dedup_key,
          opts,
        )
      : {
          ok: false as const,
          status: null,
          error: "the contact point was removed",
          permanent: true,
          retryAfterMs: null,
        };
    if (result.ok) {
      await db.alertNotification.update({
        where: { id: n.id },
        data: {
          status: "delivered",
          deliveredAt: new Date(),
          lastStatusCode: result.status,
          lastError: null,
          lastResponse: null,
        },
      });
      counts.delivered++;
      continue;
    }
    const final = result.permanent || n.attempts >= MAX_ATTEMPTS;
    const why = result.refused
      ? " — not retried"
      : result.permanent
        ? " — not retried: the receiver refused the request itself"
        : ` — gave up after ${n.attempts} attempts`;
    await db.alertNotification.update({
      where: { id: n.id },
      data: {
        status: final ? "failed" : "pending",
        lastStatusCode: result.status,
        lastError: `${result.error}${cp ? ` (${cp.name})` : ""}${final ? why : ""}`.slice(0, 2000),
        lastResponse: result.response?.slice(0, 300) ?? null,
        nextAttemptAt: new Date(
          Date.now() +
            Math.max(notificationRetryDelay(n.attempts, baseMs), Math.min(result.retryAfterMs ?? 0, 600_000)),
        ),
      },
    });
    if (final) counts.failed++;
    else counts.retrying++;
  }
  return counts;
}
