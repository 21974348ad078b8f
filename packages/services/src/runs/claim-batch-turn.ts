// A worker's first step for a batch job: may this job run a batch now? Only the job of the current
// scheduling turn of a running version may; a job of an older turn is stale (its work was done or
// superseded), and a pause or stop that was asked for is settled here instead of running a batch.
// Correctness does not depend on this check — the engine's lease fences — but it keeps stray jobs
// (double-enqueued, replayed after a Redis loss) from running extra batches.
import type { PrismaClient } from "@sluice/db";
import { inTransaction, lockRun, recordTransition, type TLockedRun, type TTx } from "./run-record";

export type TBatchTurnClaim =
  /** Run the batch; the run row now says which worker has it in flight. */
  | { kind: "run"; seq: number; consecutiveFailures: number }
  /** The job belongs to another turn than the current one; do nothing. */
  | { kind: "stale"; currentSeq: number; running: boolean }
  /** A pause/stop was pending: the status now follows it, no batch runs. */
  | { kind: "settled"; status: "paused" | "stopped" }
  /** The version is not running (paused, stopped or failed). */
  | { kind: "idle"; status: string };

export interface TBatchTurnRef {
  pipelineVersionId: string;
  seq: number;
  /** workers.id of the worker holding the job. */
  workerId: string;
}

export async function claimBatchTurn(db: PrismaClient, turn: TBatchTurnRef): Promise<TBatchTurnClaim> {
  // Fast path, one statement: the usual case, the current turn of a running version.
  const claimed = await db.$queryRaw<{ failures: number }[]>`
    UPDATE pipeline_runs SET batch_started_at = now(), batch_worker_id = ${turn.workerId}, next_batch_at = NULL, updated_at = now()
     WHERE pipeline_version_id = ${turn.pipelineVersionId} AND schedule_seq = ${turn.seq} AND status = 'running' AND desired_state = 'running'
    RETURNING consecutive_failures AS failures`;
  if (claimed[0]) return { kind: "run", seq: turn.seq, consecutiveFailures: claimed[0].failures };
  return inTransaction(db, async (tx) => {
    const run = await lockRun(tx, turn.pipelineVersionId);
    if (run.status !== "running") return { kind: "idle", status: run.status };
    if (run.seq !== turn.seq) return { kind: "stale", currentSeq: run.seq, running: run.desired === "running" };
    if (run.desired !== "running") return { kind: "settled", status: await settlePending(tx, run, turn.workerId, "no batch was in flight") };
    await tx.pipelineRun.update({
      where: { pipelineVersionId: turn.pipelineVersionId },
      data: { batchStartedAt: new Date(), batchWorkerId: turn.workerId, nextBatchAt: null, updatedAt: new Date() },
    });
    return { kind: "run", seq: run.seq, consecutiveFailures: run.consecutiveFailures };
  });
}

/** Move a running version whose desired state is paused/stopped to that status, and record it. */
export async function settlePending(tx: TTx, run: TLockedRun, workerId: string, reason: string): Promise<"paused" | "stopped"> {
  const status = run.desired === "paused" ? "paused" : "stopped";
  await tx.pipelineRun.update({
    where: { pipelineVersionId: run.pipelineVersionId },
    data: { status, batchStartedAt: null, batchWorkerId: null, nextBatchAt: null, updatedAt: new Date() },
  });
  await recordTransition(tx, run.pipelineVersionId, { action: status, from: run.status, to: status, desired: run.desired, actor: `worker:${workerId}`, reason });
  return status;
}
