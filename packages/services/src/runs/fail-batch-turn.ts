// A worker's step when a batch threw. A transient error is retried with backoff (by the queue) until
// `maxConsecutiveFailures` batches in a row have failed; then — or at once for a permanent error such
// as a `fail` expectation — the version enters `failed` with the error, the batch id and the offending
// sample visible on the run row (and in batch_failures, which `sluice status` shows).
import type { PrismaClient } from "@sluice/db";
import { settlePending, type TBatchTurnRef } from "./claim-batch-turn";
import { inTransaction, lockRun, recordTransition } from "./run-record";

export interface TBatchError {
  message: string;
  /** Retrying cannot help (a `fail` expectation, a configuration or invariant error). */
  permanent: boolean;
  /** The batch that failed (last committed + 1). */
  batchId: number;
  /** The `fail` expectation that stopped the batch; its sample rows are in batch_failures. */
  rule?: string;
}

export type TBatchTurnFailure =
  | { kind: "retry"; consecutiveFailures: number }
  | { kind: "failed"; consecutiveFailures: number }
  | { kind: "settled"; status: "paused" | "stopped" }
  | { kind: "stale" };

const SAMPLE_ROWS = 5;

export function failBatchTurn(
  db: PrismaClient,
  turn: TBatchTurnRef,
  error: TBatchError,
  maxConsecutiveFailures: number,
): Promise<TBatchTurnFailure> {
  return inTransaction(db, async (tx) => {
    const run = await lockRun(tx, turn.pipelineVersionId);
    const { pipelineVersionId } = turn;
    const where = { pipelineVersionId };
    if (run.status !== "running" || run.seq !== turn.seq) {
      if (run.batchWorkerId === turn.workerId)
        await tx.pipelineRun.update({ where, data: { batchStartedAt: null, batchWorkerId: null } });
      return { kind: "stale" };
    }
    const failures = run.consecutiveFailures + 1;
    const now = new Date();
    await tx.pipelineRun.update({
      where,
      // The attempt ended (with an error the worker caught): it no longer counts as unfinished.
      data: {
        consecutiveFailures: failures,
        unfinishedAttempts: 0,
        lastError: error.message.slice(0, 4000),
        lastErrorAt: now,
        batchStartedAt: null,
        batchWorkerId: null,
        updatedAt: now,
      },
    });
    // A pause/stop asked for while the batch was failing: honour it rather than retrying.
    if (run.desired !== "running")
      return {
        kind: "settled",
        status: await settlePending(
          tx,
          run,
          turn.workerId,
          `after a failed batch: ${error.message.slice(0, 500)}`,
        ),
      };
    if (!error.permanent && failures < maxConsecutiveFailures)
      return { kind: "retry", consecutiveFailures: failures };

    // The engine records a `fail` expectation's rule and sample rows; other errors get a row here.
    const recorded = error.rule
      ? await tx.$queryRaw<{ rule: string | null; row_count: number; samples: unknown[] }[]>`
          SELECT rule, row_count, samples FROM batch_failures
           WHERE pipeline_version_id = ${pipelineVersionId} AND batch_id = ${error.batchId} AND kind = 'expectation' AND rule = ${error.rule}
           ORDER BY id DESC LIMIT 1`
      : [];
    const failure = recorded[0];
    if (!failure) {
      await tx.$executeRaw`INSERT INTO batch_failures (pipeline_version_id, batch_id, kind, row_count, message)
                           VALUES (${pipelineVersionId}, ${error.batchId}, 'error', 0, ${error.message.slice(0, 4000)})`;
    }
    const sample = failure
      ? {
          rule: failure.rule,
          rowCount: failure.row_count,
          rows: (failure.samples ?? []).slice(0, SAMPLE_ROWS),
        }
      : { rule: null, rowCount: 0, rows: [] };
    await tx.$executeRaw`UPDATE pipeline_runs SET status = 'failed', failed_batch_id = ${error.batchId}, failure_sample = ${JSON.stringify(sample)}::jsonb,
                                next_batch_at = NULL WHERE pipeline_version_id = ${pipelineVersionId}`;
    const why = error.permanent
      ? error.message
      : `${failures} consecutive failed batches; last: ${error.message}`;
    await recordTransition(tx, pipelineVersionId, {
      action: "failed",
      from: "running",
      to: "failed",
      desired: run.desired,
      actor: `worker:${turn.workerId}`,
      reason: why,
    });
    return { kind: "failed", consecutiveFailures: failures };
  });
}
