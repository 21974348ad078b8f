// Delivers the outbox: due notifications are claimed (attempts + 1, next attempt pushed out, so two
// deliverers never send the same row at once), POSTed to the team's on-call webhook, and recorded —
// delivered, or the error with a retry after exponential backoff, or failed for good after
// MAX_ATTEMPTS. Everything is visible on the Alerts page. At-least-once: a process killed between the
// receiver's answer and the record sends once more; the `X-Sluice-Notification` header (the dedup key)
// lets a receiver drop that duplicate.
import type { PrismaClient } from "@sluice/db";
import { onCallWebhookView } from "../admin/teams";

export const MAX_ATTEMPTS = 8;
const CLAIM_MS = 60_000;
const TIMEOUT_MS = 5_000;

export interface TDeliveryOptions {
  /** Looks up the environment variable a team names for its webhook (the workers' env). */
  env: (name: string) => string | undefined;
  /** Delay before retry n (1-based): base·2^(n−1), capped at 10 minutes. */
  retryBaseMs?: number;
  limit?: number;
  /** Only notifications of these rule kinds (the console's watchdog delivers its own only). */
  ruleKinds?: readonly string[];
}

export function notificationRetryDelay(attempt: number, baseMs: number): number {
  return Math.min(600_000, baseMs * 2 ** Math.max(0, attempt - 1));
}

/** The team's webhook URL, or why there is none (an actionable message). */
export function resolveOnCallUrl(
  team: { name: string; onCallWebhookEnv: string | null; onCallWebhookUrl: string | null },
  env: (name: string) => string | undefined,
): { url: string } | { error: string } {
  if (team.onCallWebhookUrl) return { url: team.onCallWebhookUrl };
  if (team.onCallWebhookEnv) {
    const url = env(team.onCallWebhookEnv);
    return url
      ? { url }
      : {
          error: `${team.name}'s on-call webhook is the environment variable ${team.onCallWebhookEnv}, which is not set on the workers: set it and restart them`,
        };
  }
  return {
    error: `${team.name} has no on-call webhook: an admin sets one on the Admin page (Teams → on-call)`,
  };
}

export async function deliverAlertNotifications(
  db: PrismaClient,
  opts: TDeliveryOptions,
): Promise<{ delivered: number; retrying: number; failed: number }> {
  const baseMs = opts.retryBaseMs ?? 5_000;
  const claimed = await db.$queryRaw<
    { id: bigint; attempts: number; payload: unknown; dedup_key: string; team_id: string }[]
  >`
    UPDATE alert_notifications SET attempts = attempts + 1, last_attempt_at = now(), next_attempt_at = now() + ${CLAIM_MS}::int * interval '1 millisecond'
     WHERE id IN (SELECT n.id FROM alert_notifications n
                   WHERE n.status = 'pending' AND n.next_attempt_at <= now()
                     AND (${opts.ruleKinds ?? null}::text[] IS NULL OR n.episode_id IN (SELECT e.id FROM alert_episodes e JOIN alert_rules r ON r.id = e.rule_id WHERE r.kind = ANY(${opts.ruleKinds ?? null}::text[])))
                   ORDER BY n.id LIMIT ${opts.limit ?? 20} FOR UPDATE OF n SKIP LOCKED)
    RETURNING id, attempts, payload, dedup_key, team_id`;
  const counts = { delivered: 0, retrying: 0, failed: 0 };
  if (claimed.length === 0) return counts;
  const teams = new Map(
    (await db.team.findMany({ where: { id: { in: [...new Set(claimed.map((c) => c.team_id))] } } })).map(
      (t) => [t.id, t],
    ),
  );
  for (const n of claimed) {
    const team = teams.get(n.team_id);
    const target = team ? resolveOnCallUrl(team, opts.env) : { error: "the team no longer exists" };
    const result =
      "url" in target
        ? await post(target.url, n.payload, n.dedup_key)
        : { ok: false as const, status: null, error: target.error };
    if (result.ok) {
      await db.alertNotification.update({
        where: { id: n.id },
        data: {
          status: "delivered",
          deliveredAt: new Date(),
          lastStatusCode: result.status,
          lastError: null,
        },
      });
      counts.delivered++;
      continue;
    }
    const final = n.attempts >= MAX_ATTEMPTS;
    // The error names the receiver by host only: a stored URL is a secret.
    const where = team ? describeTarget(team) : "";
    await db.alertNotification.update({
      where: { id: n.id },
      data: {
        status: final ? "failed" : "pending",
        lastStatusCode: result.status,
        lastError: `${result.error}${where}${final ? ` — gave up after ${n.attempts} attempts` : ""}`.slice(
          0,
          2000,
        ),
        nextAttemptAt: new Date(Date.now() + notificationRetryDelay(n.attempts, baseMs)),
      },
    });
    if (final) counts.failed++;
    else counts.retrying++;
  }
  return counts;
}

function describeTarget(team: { onCallWebhookEnv: string | null; onCallWebhookUrl: string | null }): string {
  const view = onCallWebhookView(team);
  return view === null
    ? ""
    : view.kind === "env"
      ? ` (webhook from $${view.name})`
      : ` (webhook at ${view.host})`;
}

async function post(
  url: string,
  payload: unknown,
  key: string,
): Promise<{ ok: true; status: number } | { ok: false; status: number | null; error: string }> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-sluice-notification": key },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const body = res.ok ? "" : (await res.text().catch(() => "")).slice(0, 200);
    await res.body?.cancel().catch(() => undefined);
    return res.ok
      ? { ok: true, status: res.status }
      : { ok: false, status: res.status, error: `HTTP ${res.status}${body ? `: ${body}` : ""}` };
  } catch (err) {
    const cause =
      err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
    return { ok: false, status: null, error: `request failed: ${cause}` };
  }
}
