// A worker's step when a batch threw. A transient error is retried with backoff (by the queue) until
// `maxConsecutiveFailures` batches in a row have failed; then — or at once for a permanent error such
// as a `fail` expectation — the version enters `failed` with the error, the batch id and the offending
// sample visible on the run row (and in batch_failures, which `sluice status` shows).
import { countOf, firstRowOf, sql, tables, type PrismaClient } from "@sluice/db";
import { settlePending, type TBatchTurnRef } from "./claim-batch-turn";
import { isCurrentTurn, lockTurn, updateTurn } from "./run-groups";
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
    // A partition group's failures are counted on its own row; the version's last error is shown for all.
    const t = await lockTurn(tx, run, turn);
    if (run.status !== "running" || !t || !isCurrentTurn(t, turn)) {
      if (t?.batchWorkerId === turn.workerId)
        await updateTurn(tx, turn, { batchStartedAt: null, batchWorkerId: null });
      return { kind: "stale" };
    }
    const failures = t.consecutiveFailures + 1;
    const now = new Date();
    // The attempt ended (with an error the worker caught): it no longer counts as unfinished.
    await updateTurn(tx, turn, {
      consecutiveFailures: failures,
      unfinishedAttempts: 0,
      batchStartedAt: null,
      batchWorkerId: null,
      updatedAt: now,
    });
    await tx.pipelineRun.update({
      where,
      data: { lastError: error.message.slice(0, 4000), lastErrorAt: now, updatedAt: now },
    });
    // Another partition group's batch is still in flight: its finish settles a pending pause/stop.
    if (run.desired !== "running" && t.othersInFlight) return { kind: "stale" };
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
    const batchId = BigInt(error.batchId);
    const failure = error.rule
      ? await firstRowOf(
          tx,
          tables
            .selectFrom("batch_failures")
            .select(["rule", "row_count", "samples"])
            .where("pipeline_version_id", "=", pipelineVersionId)
            .where("batch_id", "=", batchId)
            .where("kind", "=", "expectation")
            .where("rule", "=", error.rule)
            .orderBy("id", "desc")
            .limit(1),
        )
      : undefined;
    if (!failure) {
      await countOf(
        tx,
        tables.insertInto("batch_failures").values({
          pipeline_version_id: pipelineVersionId,
          batch_id: batchId,
          kind: "error",
          row_count: 0,
          message: error.message.slice(0, 4000),
        }),
      );
    }
    const sample = failure
      ? {
          rule: failure.rule,
          rowCount: failure.row_count,
          // The engine writes samples as a JSON array of rows.
          rows: ((failure.samples as unknown[] | null) ?? []).slice(0, SAMPLE_ROWS),
        }
      : { rule: null, rowCount: 0, rows: [] };
    await countOf(
      tx,
      tables
        .updateTable("pipeline_runs")
        .set({
          status: "failed",
          failed_batch_id: batchId,
          failure_sample: sql`${JSON.stringify(sample)}::jsonb`,
          next_batch_at: null,
        })
        .where("pipeline_version_id", "=", pipelineVersionId),
    );
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
