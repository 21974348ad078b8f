// A worker's last step after a batch committed (or found nothing to read): hand over to the next turn.
// The turn advances only if this job still holds the current one (compare-and-set on schedule_seq), so
// a stale or duplicate job can never fork the schedule. A pause/stop asked for during the batch takes
// effect now — after the commit, never in the middle of a batch.
import { firstRowOf, sql, tables, type PrismaClient } from "@sluice/db";
import { settlePending } from "./claim-batch-turn";
import { inTransaction, lockRun, recordTransition } from "./run-record";
import type { TBatchTurnRef } from "./claim-batch-turn";

export type TBatchTurnFinish =
  /** Queue the job of turn `seq` to start after `delayMs`. */
  | { kind: "next"; seq: number; delayMs: number }
  /** The version was paused or stopped after this batch. */
  | { kind: "settled"; status: "paused" | "stopped" }
  /** `trigger: availableNow` and the backlog is drained: the version is now stopped. */
  | { kind: "drained" }
  /** Someone else moved the turn on (or the version stopped running); nothing to schedule. */
  | { kind: "stale" };

export interface TBatchOutcome {
  committed: boolean;
  /** Offsets still to read after this batch. */
  backlog: number;
  /** The spec's trigger interval; undefined for availableNow. */
  triggerEveryMs: number | undefined;
  /** When this batch started (for "interval minus elapsed"). */
  startedAt: Date;
  now?: Date;
}

/** When the next batch should start: at once while there is a backlog, else one trigger interval after this one started. */
export function nextBatchDelay(o: TBatchOutcome): { drained: true } | { drained: false; delayMs: number } {
  if (o.triggerEveryMs === undefined)
    return o.committed && o.backlog > 0 ? { drained: false, delayMs: 0 } : { drained: true };
  if (o.committed && o.backlog > 0) return { drained: false, delayMs: 0 };
  const elapsed = (o.now ?? new Date()).getTime() - o.startedAt.getTime();
  return { drained: false, delayMs: Math.max(0, o.triggerEveryMs - elapsed) };
}

export async function finishBatchTurn(
  db: PrismaClient,
  turn: TBatchTurnRef,
  outcome: TBatchOutcome,
): Promise<TBatchTurnFinish> {
  // Fast path, one statement: still the current turn of a running version that should keep running.
  const next = nextBatchDelay(outcome);
  if (!next.drained) {
    const lastBatchAt = outcome.committed ? new Date() : null;
    const advanced = await firstRowOf(
      db,
      tables
        .updateTable("pipeline_runs")
        .set((eb) => ({
          schedule_seq: eb("schedule_seq", "+", 1),
          consecutive_failures: 0,
          unfinished_attempts: 0,
          next_batch_at: new Date(Date.now() + next.delayMs),
          last_batch_at: eb.fn.coalesce(sql<Date | null>`${lastBatchAt}::timestamptz`, "last_batch_at"),
          updated_at: sql`now()`,
          batch_started_at: eb
            .case()
            .when("batch_worker_id", "=", turn.workerId)
            .then(eb.lit(null))
            .else(eb.ref("batch_started_at"))
            .end(),
          batch_worker_id: eb
            .case()
            .when("batch_worker_id", "=", turn.workerId)
            .then(eb.lit(null))
            .else(eb.ref("batch_worker_id"))
            .end(),
        }))
        .where("pipeline_version_id", "=", turn.pipelineVersionId)
        .where("schedule_seq", "=", turn.seq)
        .where("status", "=", "running")
        .where("desired_state", "=", "running")
        .returning("schedule_seq"),
    );
    if (advanced) return { kind: "next", seq: advanced.schedule_seq, delayMs: next.delayMs };
  }
  return inTransaction(db, async (tx) => {
    const run = await lockRun(tx, turn.pipelineVersionId);
    const where = { pipelineVersionId: turn.pipelineVersionId };
    const mine = run.batchWorkerId === turn.workerId;
    const done = {
      consecutiveFailures: 0,
      unfinishedAttempts: 0,
      updatedAt: new Date(),
      ...(outcome.committed ? { lastBatchAt: new Date() } : {}),
      ...(mine ? { batchStartedAt: null, batchWorkerId: null } : {}),
    };
    if (run.status !== "running" || run.seq !== turn.seq) {
      if (mine) await tx.pipelineRun.update({ where, data: { batchStartedAt: null, batchWorkerId: null } });
      return { kind: "stale" };
    }
    await tx.pipelineRun.update({ where, data: done });
    // Two deliveries of this turn's job ran at once (BullMQ took the first for stalled on a loaded
    // machine, and the claim's fast path let the second run) and the other one's batch is still in
    // flight on a live worker: settling now would say paused while that batch may yet plan and
    // commit. Its own finish settles the pause; if it is fenced off or dies, its job's next delivery
    // settles it at the claim (claim-batch-turn.ts).
    if (run.desired !== "running" && !mine && run.batchInFlight) return { kind: "stale" };
    if (run.desired !== "running")
      return {
        kind: "settled",
        status: await settlePending(tx, run, turn.workerId, "after the in-flight batch committed"),
      };
    if (next.drained) {
      await tx.pipelineRun.update({
        where,
        data: { status: "stopped", desiredState: "stopped", nextBatchAt: null },
      });
      await recordTransition(tx, turn.pipelineVersionId, {
        action: "drained",
        from: "running",
        to: "stopped",
        desired: "stopped",
        actor: `worker:${turn.workerId}`,
        reason: "trigger availableNow: the backlog is drained",
      });
      return { kind: "drained" };
    }
    await tx.pipelineRun.update({
      where,
      data: { scheduleSeq: turn.seq + 1, nextBatchAt: new Date(Date.now() + next.delayMs) },
    });
    return { kind: "next", seq: turn.seq + 1, delayMs: next.delayMs };
  });
}
