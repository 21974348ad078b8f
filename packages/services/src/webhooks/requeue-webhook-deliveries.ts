// Re-queue failed webhook deliveries of a pipeline — all of them, or one idempotency key — after the
// receiver was fixed; used by the console and the CLI. A delivery the engine gave up on (maxAttempts
// used, or a permanent 4xx) stays `failed` and nothing sends it again until an operator asks.
//
// What it does: in one transaction, record who and why (webhook_requeues, like the lifecycle commands'
// pipeline_run_transitions) and move the deliveries failed → pending with attempts back to 0 and the
// same key and body. It sends nothing itself: the worker running the pipeline sends re-queued
// deliveries between batches, under the pipeline's lease, with its URL and secret headers from the
// worker's environment (see @sluice/engine webhook/requeued-deliveries.ts for why there).
//
// A delivery with a recorded success is never re-queued (only `status = 'failed'` rows move), and the
// engine sends a pending key only after counting the attempt on a still-pending row, so a key is never
// sent again after its success was recorded.
import { z } from "zod";
import { countOf, sql, tables, type PrismaClient } from "@sluice/db";
import { recordAuditEvent, type TAuditWho } from "../audit/record-audit-event";
import { inTransaction } from "../runs/run-record";
import { ServiceError } from "../service-error";

export const ZRequeueWebhookDeliveriesInput = z.object({
  pipeline: z.string().min(1).max(200),
  /** One idempotency key; left out: every failed delivery of the pipeline. */
  key: z.string().min(1).max(2000).optional(),
  /** "user:<email>" for people in the console, "cli:<user>@<host>" for the CLI. */
  actor: z.string().min(1).max(200),
  reason: z.string().max(2000).default(""),
});
export type TRequeueWebhookDeliveriesInput = z.input<typeof ZRequeueWebhookDeliveriesInput>;

export interface TRequeueWebhookDeliveriesResult {
  pipeline: string;
  /** Deliveries moved from failed to pending (0: there were none). */
  requeued: number;
  /** The webhook_requeues row; null when nothing was re-queued. */
  requeueId: string | null;
  /** A version of the pipeline is running on the workers, so they send the deliveries at its next batch turn. */
  runningOnWorkers: boolean;
}

/** The request cannot be done as asked: an unknown pipeline or key, or a key that is not failed. */
export class WebhookRequeueError extends ServiceError {
  constructor(
    message: string,
    readonly reason: "not_found" | "not_failed",
  ) {
    super(message, reason === "not_found" ? "not_found" : "conflict");
  }
}

class NothingToRequeue extends Error {}

/** `audit`: record the re-queue in the audit log, in the same transaction (the console and the CLI pass it). */
export async function requeueFailedWebhookDeliveries(
  db: PrismaClient,
  input: TRequeueWebhookDeliveriesInput,
  opts: { audit?: TAuditWho } = {},
): Promise<TRequeueWebhookDeliveriesResult> {
  const { pipeline: name, key, actor, reason } = ZRequeueWebhookDeliveriesInput.parse(input);
  const pipeline = await db.pipeline.findUnique({ where: { name }, select: { id: true } });
  if (!pipeline) throw new WebhookRequeueError(`no pipeline named "${name}"`, "not_found");
  const pipelineId = pipeline.id;
  const runningOnWorkers =
    (await db.pipelineRun.count({ where: { status: "running", pipelineVersion: { pipelineId } } })) > 0;
  try {
    const { id, n } = await inTransaction(db, async (tx) => {
      const requeue = await tx.webhookRequeue.create({
        data: {
          pipelineId,
          idempotencyKey: key ?? null,
          deliveries: 0,
          actor,
          reason: reason.slice(0, 2000),
        },
      });
      // Only failed rows move. A concurrent re-queue of the same rows waits for this one's row locks,
      // then finds them pending and moves nothing.
      const n = await countOf(
        tx,
        tables
          .updateTable("webhook_deliveries")
          .set({ status: "pending", attempts: 0, requeued_at: sql`now()`, requeue_id: requeue.id })
          .where("pipeline_id", "=", pipelineId)
          .where("status", "=", "failed")
          .$if(key !== undefined, (q) => q.where("idempotency_key", "=", key!)),
      );
      // Nothing moved: roll back, so the audit holds only re-queues that did something.
      if (n === 0) throw new NothingToRequeue();
      await tx.webhookRequeue.update({ where: { id: requeue.id }, data: { deliveries: n } });
      if (opts.audit) {
        await recordAuditEvent(tx, {
          ...opts.audit,
          action: "webhook.requeue",
          target: { type: "pipeline", id: pipelineId, label: name },
          reason,
          after: { requeued: n, key: key ?? null, requeueId: String(requeue.id) },
        });
      }
      return { id: requeue.id, n };
    });
    return { pipeline: name, requeued: n, requeueId: String(id), runningOnWorkers };
  } catch (err) {
    if (!(err instanceof NothingToRequeue)) throw err;
  }
  if (key !== undefined) throw await notFailed(db, name, pipelineId, key);
  return { pipeline: name, requeued: 0, requeueId: null, runningOnWorkers };
}

/** Why one key could not be re-queued, in words an operator can act on. */
async function notFailed(
  db: PrismaClient,
  name: string,
  pipelineId: string,
  key: string,
): Promise<WebhookRequeueError> {
  const d = await db.webhookDelivery.findUnique({
    where: { pipelineId_idempotencyKey: { pipelineId, idempotencyKey: key } },
    select: { status: true, deliveredAt: true },
  });
  if (!d)
    return new WebhookRequeueError(
      `pipeline "${name}" has no webhook delivery with key "${key}"`,
      "not_found",
    );
  if (d.status === "delivered") {
    return new WebhookRequeueError(
      `"${key}" was delivered${d.deliveredAt ? ` at ${d.deliveredAt.toISOString()}` : ""}: a delivered key is never sent again`,
      "not_failed",
    );
  }
  return new WebhookRequeueError(
    `"${key}" is ${d.status}, not failed: it is being sent (or was re-queued already)`,
    "not_failed",
  );
}
