// `sluice webhooks <pipeline> [--failed]`: a webhook pipeline's delivery ledger.
// `sluice webhooks retry <pipeline> [--key K] [reason]`: re-queue its failed deliveries once the
// receiver is fixed. The re-queue only changes the ledger (and records who and why); the workers
// running the pipeline send the deliveries, so this command needs no webhook URL or secret.
import { createPrismaClient } from "@sluice/db";
import { isRetriable } from "@sluice/engine";
import {
  findWebhookDeliveries,
  requeueFailedWebhookDeliveries,
  ServiceError,
  type TWebhookDeliveryView,
} from "@sluice/services";
import { authorizeCli, cliAuditWho, EXIT_NOT_ALLOWED } from "../actor";
import { connect } from "../connect";

const RECENT = 20;
const MAX_LISTED = 1000;

export async function webhooksCommand(pipeline: string, opts: { failedOnly: boolean }): Promise<number> {
  return withDb(pipeline, async (db) => {
    const found = await findWebhookDeliveries(db, {
      pipeline,
      ...(opts.failedOnly ? { status: "failed" as const } : {}),
      limit: opts.failedOnly ? MAX_LISTED : RECENT,
    });
    if (!found) {
      console.error(`no pipeline named "${pipeline}"`);
      return 1;
    }
    const { counts, deliveries } = found;
    const total = counts.pending + counts.delivered + counts.failed;
    console.log(
      `${pipeline}: webhook deliveries (table webhook_deliveries): delivered ${counts.delivered}, pending ${counts.pending}, failed ${counts.failed}`,
    );
    for (const d of deliveries) console.log(`  ${formatDelivery(d)}`);
    const listed = opts.failedOnly ? counts.failed : total;
    if (deliveries.length < listed)
      console.log(
        `  (the newest ${deliveries.length} of ${listed}${opts.failedOnly ? "" : "; --failed lists the failed ones"})`,
      );
    if (counts.failed > 0)
      console.log(
        `retry the failed ones once the receiver is fixed: npx sluice webhooks retry ${pipeline} [--key <key>] [reason]`,
      );
    return 0;
  });
}

export async function webhooksRetryCommand(
  pipeline: string,
  opts: { key?: string; reason: string; as?: string },
): Promise<number> {
  return withDb(pipeline, async (db) => {
    const who = await authorizeCli(db, opts.as, "webhook.requeue", { pipeline });
    if (!who) return EXIT_NOT_ALLOWED;
    try {
      const r = await requeueFailedWebhookDeliveries(
        db,
        { pipeline, ...(opts.key ? { key: opts.key } : {}), actor: who.label, reason: opts.reason },
        { audit: cliAuditWho(who) },
      );
      if (r.requeued === 0) {
        console.log(`${pipeline}: no failed webhook deliveries: nothing to retry`);
        return 0;
      }
      console.log(
        `${pipeline}: re-queued ${r.requeued} failed webhook deliveries with their idempotency keys (table webhook_requeues, #${r.requeueId})`,
      );
      console.log(
        r.runningOnWorkers
          ? "  the workers send them at the pipeline's next batch turn; watch: npx sluice webhooks " +
              pipeline
          : `  ${pipeline} is not running on the workers: they are sent once it runs (npx sluice resume|start ${pipeline}, or npx sluice run <spec>)`,
      );
      return 0;
    } catch (err) {
      if (err instanceof ServiceError) {
        console.error(`${pipeline}: ${err.message}`);
        return 1;
      }
      throw err;
    }
  });
}

function formatDelivery(d: TWebhookDeliveryView): string {
  const when = (d.deliveredAt ?? d.lastAttemptAt ?? d.createdAt).toISOString();
  const requeued = d.requeuedAt ? `, re-queued ${d.requeuedAt.toISOString()}` : "";
  const error = d.status !== "delivered" && d.lastError ? `: ${d.lastError}` : "";
  return `${d.status.padEnd(9)} ${d.key}  ${d.attempts} attempt(s), ${when}, batch ${d.batchId}${requeued}${error}`;
}

async function withDb(
  pipeline: string,
  fn: (db: ReturnType<typeof createPrismaClient>) => Promise<number>,
): Promise<number> {
  const services = await connect();
  const db = createPrismaClient(services.pool);
  try {
    return await fn(db);
  } catch (err) {
    console.error(`${pipeline}: ${(err as Error).message}`);
    return isRetriable(err) ? 2 : 1;
  } finally {
    await db.$disconnect();
    await services.close();
  }
}
