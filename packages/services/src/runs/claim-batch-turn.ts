// A worker's first step for a batch job: may this job run a batch now? Only the job of the current
// scheduling turn of a running version may; a job of an older turn is stale (its work was done or
// superseded), and a pause or stop that was asked for is settled here instead of running a batch.
// Correctness does not depend on this check — the engine's lease fences — but it keeps stray jobs
// (double-enqueued, replayed after a Redis loss) from running extra batches.
//
// The claim also counts the attempt, durably and before any of the batch runs: a batch that kills
// every worker that runs it is failed here, at its next claim, instead of looping (poison-batch.ts).
import { countOf, sql, tables, type PrismaClient } from "@sluice/db";
import { nextBatchId, nextBatchIdSql } from "@sluice/engine";
import { prismaSqlClient } from "../change-requests/prisma-sql-client";
import { DEFAULT_MAX_UNFINISHED_ATTEMPTS, failPoisonBatch, isPoisoned } from "./poison-batch";
import { inTransaction, lockRun, recordTransition, type TLockedRun, type TTx } from "./run-record";

export type TBatchTurnClaim =
  /** Run the batch; the run row now says which worker has it in flight. */
  | { kind: "run"; seq: number; consecutiveFailures: number }
  /** The job belongs to another turn than the current one; do nothing. */
  | { kind: "stale"; currentSeq: number; running: boolean }
  /** A pause/stop was pending: the status now follows it, no batch runs. */
  | { kind: "settled"; status: "paused" | "stopped" }
  /** A pause/stop is pending but a live worker still has this turn's batch in flight: it settles them after its commit. */
  | { kind: "busy"; workerId: string }
  /** The version is not running (paused, stopped or failed). */
  | { kind: "idle"; status: string }
  /** The batch was started `maxUnfinishedAttempts` times and never finished: the version is now failed. */
  | { kind: "poisoned"; batchId: number; message: string };

export interface TBatchTurnRef {
  pipelineVersionId: string;
  seq: number;
  /** workers.id of the worker holding the job. */
  workerId: string;
}

export interface TClaimOptions {
  /** Attempts of one batch that may start and never finish before the version fails (default 3). */
  maxUnfinishedAttempts?: number;
  /** This worker process is running a batch of the version right now (another delivery of the job). */
  inFlightHere?: boolean;
}

export async function claimBatchTurn(
  db: PrismaClient,
  turn: TBatchTurnRef,
  opts: TClaimOptions = {},
): Promise<TBatchTurnClaim> {
  const max = opts.maxUnfinishedAttempts ?? DEFAULT_MAX_UNFINISHED_ATTEMPTS;
  // Fast path, one statement: the usual case, the current turn of a running version whose next batch
  // has not already been started `max` times without finishing. It counts this attempt. Left raw: the
  // next batch id is the engine's SQL on its checkpoints table (nextBatchIdSql), which stays the engine's.
  const claimed = await db.$queryRawUnsafe<{ failures: number }[]>(
    `UPDATE pipeline_runs r SET batch_started_at = now(), batch_worker_id = $1, next_batch_at = NULL, updated_at = now(),
            unfinished_attempts = CASE WHEN r.attempt_batch_id = n.batch_id THEN r.unfinished_attempts + 1 ELSE 1 END,
            attempt_batch_id = n.batch_id
       FROM (SELECT ${nextBatchIdSql("$2")} AS batch_id) n
      WHERE r.pipeline_version_id = $2 AND r.schedule_seq = $3 AND r.status = 'running' AND r.desired_state = 'running'
        AND NOT (r.attempt_batch_id IS NOT DISTINCT FROM n.batch_id AND r.unfinished_attempts >= $4)
     RETURNING r.consecutive_failures AS failures`,
    turn.workerId,
    turn.pipelineVersionId,
    turn.seq,
    max,
  );
  if (claimed[0]) return { kind: "run", seq: turn.seq, consecutiveFailures: claimed[0].failures };
  return inTransaction(db, async (tx) => {
    const run = await lockRun(tx, turn.pipelineVersionId);
    if (run.status !== "running") return { kind: "idle", status: run.status };
    if (run.seq !== turn.seq)
      return { kind: "stale", currentSeq: run.seq, running: run.desired === "running" };
    if (run.desired !== "running") {
      // Settling now under a batch that is still running would let it commit after the version says
      // paused. That happens when BullMQ delivers the job again while the first delivery runs (it took
      // the first for stalled on a loaded machine): the worker in flight settles after its commit, or,
      // if it dies, its heartbeat expires and a later delivery of this turn settles here.
      if (run.batchInFlight && (run.batchWorkerId !== turn.workerId || opts.inFlightHere))
        return { kind: "busy", workerId: run.batchWorkerId! };
      return {
        kind: "settled",
        status: await settlePending(tx, run, turn.workerId, "no batch was in flight"),
      };
    }
    const batchId = await nextBatchId(prismaSqlClient(tx), turn.pipelineVersionId);
    if (isPoisoned(run, batchId, max))
      return { kind: "poisoned", batchId, message: await failPoisonBatch(tx, run, turn.workerId, batchId) };
    await tx.pipelineRun.update({
      where: { pipelineVersionId: turn.pipelineVersionId },
      data: {
        batchStartedAt: new Date(),
        batchWorkerId: turn.workerId,
        nextBatchAt: null,
        updatedAt: new Date(),
        attemptBatchId: batchId,
        unfinishedAttempts: run.attemptBatchId === batchId ? run.unfinishedAttempts + 1 : 1,
      },
    });
    return { kind: "run", seq: run.seq, consecutiveFailures: run.consecutiveFailures };
  });
}

/**
 * An attempt that ended without finishing its turn — fenced off by another runner, or refused because
 * this process already runs the version: it did not die, so it no longer counts as unfinished. Unless
 * this process still runs the version (`inFlightHere`), no batch of this worker is in flight any more,
 * so the run row stops saying so: a pending pause/stop may then settle at the next claim.
 */
export async function releaseBatchAttempt(
  db: PrismaClient,
  turn: TBatchTurnRef,
  opts: { inFlightHere?: boolean } = {},
): Promise<void> {
  const mine = opts.inFlightHere ? sql<boolean>`false` : sql<boolean>`batch_worker_id = ${turn.workerId}`;
  await countOf(
    db,
    tables
      .updateTable("pipeline_runs")
      .set((eb) => ({
        unfinished_attempts: eb.fn("greatest", [eb("unfinished_attempts", "-", 1), eb.lit(0)]),
        batch_started_at: eb.case().when(mine).then(eb.lit(null)).else(eb.ref("batch_started_at")).end(),
        batch_worker_id: eb.case().when(mine).then(eb.lit(null)).else(eb.ref("batch_worker_id")).end(),
      }))
      .where("pipeline_version_id", "=", turn.pipelineVersionId)
      .where("schedule_seq", "=", turn.seq),
  );
}

/** Move a running version whose desired state is paused/stopped to that status, and record it. */
export async function settlePending(
  tx: TTx,
  run: TLockedRun,
  workerId: string,
  reason: string,
): Promise<"paused" | "stopped"> {
  const status = run.desired === "paused" ? "paused" : "stopped";
  await tx.pipelineRun.update({
    where: { pipelineVersionId: run.pipelineVersionId },
    data: { status, batchStartedAt: null, batchWorkerId: null, nextBatchAt: null, updatedAt: new Date() },
  });
  await recordTransition(tx, run.pipelineVersionId, {
    action: status,
    from: run.status,
    to: status,
    desired: run.desired,
    actor: `worker:${workerId}`,
    reason,
  });
  return status;
}
