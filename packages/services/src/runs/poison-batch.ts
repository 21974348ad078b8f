// A poison batch: one that kills the worker running it (out of memory, a crash in a library) every
// time. Nothing in the dying process can record that, so each attempt is counted when it is claimed
// (claim-batch-turn.ts) and the count is cleared when an attempt ends in any way the worker saw — a
// commit, an empty batch, a caught error, a fence. A count that reaches the limit therefore means that
// many workers died (or were abandoned) in the middle of this very batch; the next claim fails the
// version instead of handing the batch to the next victim, with what an operator needs to act.
import { countOf, sql, tables } from "@sluice/db";
import { findPlannedBatch, type RecordedPlan } from "@sluice/engine";
import { prismaSqlClient } from "../change-requests/prisma-sql-client";
import { recordTransition, type TLockedRun, type TTx } from "./run-record";

/** Attempts of one batch that never finished before the version is failed (WORKER_MAX_UNFINISHED_ATTEMPTS). */
export const DEFAULT_MAX_UNFINISHED_ATTEMPTS = 3;

interface TPlannedRange {
  partition: number;
  from: number;
  to: number;
}

/** "partition 0 offsets 100–149, partition 2 offsets 80–119" (inclusive), or why there are none. */
export function describeRanges(ranges: TPlannedRange[] | null): string {
  if (!ranges) return "not planned yet: it died before recording its offsets";
  const read = ranges.filter((r) => r.to > r.from);
  if (read.length === 0) return "no offsets to read";
  return read.map((r) => `partition ${r.partition} offsets ${r.from}–${r.to - 1}`).join(", ");
}

export function poisonBatchMessage(
  batchId: number,
  ranges: TPlannedRange[] | null,
  deaths: number,
  lastWorker: string | null,
  replay: RecordedPlan["replay"] = null,
): string {
  const what = replay
    ? `a dead-letter replay of ${replay.itemIds.length} row(s), request #${replay.replayIds.join(", #")}`
    : describeRanges(ranges);
  return (
    `batch ${batchId} (${what}): the worker running it died ${deaths} times` +
    `\nEach attempt was started${lastWorker ? ` (last on worker ${lastWorker})` : ""} and none finished — no commit and no error the worker could report, ` +
    `which is what a crash looks like (out of memory, a native crash, SIGKILL). The pipeline version is failed so the batch stops killing workers. ` +
    `Find the cause in the dead workers' output (e.g. "JavaScript heap out of memory": give the workers more memory with NODE_OPTIONS=--max-old-space-size=…, ` +
    `or fix the records or the spec), then restart the pipeline (sluice restart <pipeline>): the batch re-runs over the same offsets. ` +
    `To skip it instead, reset the checkpoint past these offsets.`
  );
}

/**
 * Whether the batch about to be claimed has already been started `max` times without finishing.
 * `nextBatchId` is the checkpoint's last batch + 1: a commit moves it on, which starts a new count.
 */
export function isPoisoned(
  run: Pick<TLockedRun, "attemptBatchId" | "unfinishedAttempts">,
  nextBatchId: number,
  max: number,
): boolean {
  return run.attemptBatchId === nextBatchId && run.unfinishedAttempts >= max;
}

/** Put the version into `failed` for a poison batch: the run row, a batch_failures row, a transition. */
export async function failPoisonBatch(
  tx: TTx,
  run: TLockedRun,
  workerId: string,
  batchId: number,
): Promise<string> {
  const { pipelineVersionId } = run;
  const planned = await findPlannedBatch(prismaSqlClient(tx), pipelineVersionId, batchId);
  const ranges = planned?.ranges ?? null;
  const message = poisonBatchMessage(
    batchId,
    ranges,
    run.unfinishedAttempts,
    run.batchWorkerId,
    planned?.replay ?? null,
  );
  const sample = { rule: null, rowCount: 0, rows: [], ranges, unfinishedAttempts: run.unfinishedAttempts };
  await countOf(
    tx,
    tables.insertInto("batch_failures").values({
      pipeline_version_id: pipelineVersionId,
      batch_id: BigInt(batchId),
      kind: "worker-died",
      row_count: 0,
      message,
    }),
  );
  await countOf(
    tx,
    tables
      .updateTable("pipeline_runs")
      .set({
        status: "failed",
        failed_batch_id: BigInt(batchId),
        failure_sample: sql`${JSON.stringify(sample)}::jsonb`,
        last_error: message,
        last_error_at: sql`now()`,
        next_batch_at: null,
        batch_started_at: null,
        batch_worker_id: null,
        updated_at: sql`now()`,
      })
      .where("pipeline_version_id", "=", pipelineVersionId),
  );
  await recordTransition(tx, pipelineVersionId, {
    action: "failed",
    from: run.status,
    to: "failed",
    desired: run.desired,
    actor: `worker:${workerId}`,
    reason: message,
  });
  return message;
}
