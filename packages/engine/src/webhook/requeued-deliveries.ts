// Failed webhook deliveries that an operator re-queued (failed → pending, same idempotency key, attempts
// back to 0; `requeueFailedWebhookDeliveries` in @sluice/services) are sent again by whoever runs the
// pipeline — the worker's batch turn, or `sluice run` — between batches, holding the version's lease.
//
// Why not by the re-queue itself (the console or the CLI)? The webhook's URL and secret headers may
// come from the environment (`urlFromEnv`, `headersFromEnv`), which only the workers have; the receiver
// may be reachable only from their network; and a sender outside the lease could race the runner when a
// batch meets the same key. Sent here, every attempt is counted and fenced on the lease like a batch's
// own deliveries, with the pipeline's target, timeout, backoff and maxAttempts. A paused or stopped
// pipeline sends nothing until it runs again: its side effects pause with it.
//
// Why not inside a batch? A batch's outcomes account for its input rows, and a resend has none; and a
// caught-up runner does not reach its operator at all, so a quiet pipeline would never resend.
import { compileSpec, outputViews, type TPipelineSpec } from "@sluice/pipeline-spec";
import { openWebhook, type ResultContext } from "../runner/open-result";

/** At most this many re-queued deliveries per call (a batch turn): the rest go in the next ones. */
export const REQUEUED_PER_TURN = 100;

export interface RequeuedReport {
  /** Re-queued deliveries found pending. */
  found: number;
  sent: number;
  /** Delivered meanwhile (e.g. by a batch that met the key): not sent again. */
  alreadyDelivered: number;
  retries: number;
  /** Given up again after maxAttempts: failed, visible, and can be re-queued again. */
  failed: number;
}

export interface RequeuedDeliveries {
  /** Sends the re-queued deliveries of the pipeline, fenced on the caller's lease epoch (FencedError if it moved). */
  send(epoch: number): Promise<RequeuedReport>;
}

/** For a spec with a webhook sink (plain rows or an aggregate's windows); undefined for any other sink, or a partition group other than 0. */
export async function openRequeuedDeliveries(
  ctx: Omit<ResultContext, "sinkTables">,
  spec: TPipelineSpec,
): Promise<RequeuedDeliveries | undefined> {
  // Partition groups: group 0 alone resends, as it alone applies dead-letter replays — two groups
  // never race on one re-queued key.
  if (ctx.group !== undefined && ctx.group.no !== 0) return undefined;
  // The webhook output (a pipeline has at most one: the delivery ledger is kept per pipeline).
  const view = outputViews(spec).find((v) => v.spec.sink.webhook);
  if (!view) return undefined;
  const compiled = compileSpec(view.spec);
  const hook = view.spec.sink.webhook!;
  const operator = await openWebhook(ctx, compiled, hook);
  return {
    async send(epoch) {
      const r = await operator.resendRequeued(epoch, REQUEUED_PER_TURN);
      return {
        found: r.found,
        sent: r.sent,
        alreadyDelivered: r.alreadyDelivered,
        retries: r.retries,
        failed: r.failed.size,
      };
    },
  };
}
