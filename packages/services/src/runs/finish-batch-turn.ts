// A worker's last step after a batch committed (or found nothing to read): hand over to the next turn.
// The turn advances only if this job still holds the current one (compare-and-set on schedule_seq), so
// a stale or duplicate job can never fork the schedule. A pause/stop asked for during the batch takes
// effect now — after the commit, never in the middle of a batch. A partition group's job hands over
// to its group's next turn (run-groups.ts); a pause settles with the last group in flight, and
// `availableNow` stops the version once every group has drained.
import { firstRowOf, sql, tables, type PrismaClient } from "@sluice/db";
import { settlePending } from "./claim-batch-turn";
import { isCurrentTurn, lockTurn, updateTurn } from "./run-groups";
import type { TGroupTurnRef } from "./scheduled-turn";
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
  | { kind: "stale" }
  /** availableNow: this partition group drained its backlog; other groups still run. */
  | { kind: "group-drained" };

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
  const next = nextBatchDelay(outcome);
  if (!next.drained) {
    const advanced = turn.group
      ? await advanceGroupFast(db, turn, turn.group, outcome.committed, next.delayMs)
      : await advanceFast(db, turn, outcome.committed, next.delayMs);
    if (advanced !== undefined) return { kind: "next", seq: advanced, delayMs: next.delayMs };
  }
  return inTransaction(db, async (tx) => {
    const run = await lockRun(tx, turn.pipelineVersionId);
    const group = turn.group;
    const t = await lockTurn(tx, run, turn);
    const mine = t?.batchWorkerId === turn.workerId;
    const done = {
      consecutiveFailures: 0,
      unfinishedAttempts: 0,
      updatedAt: new Date(),
      ...(outcome.committed ? { lastBatchAt: new Date() } : {}),
      ...(mine ? { batchStartedAt: null, batchWorkerId: null } : {}),
    };
    if (run.status !== "running" || !t || !isCurrentTurn(t, turn) || t.drained) {
      if (mine) await updateTurn(tx, turn, { batchStartedAt: null, batchWorkerId: null });
      return { kind: "stale" };
    }
    await updateTurn(tx, turn, done);
    // Two deliveries of this turn's job ran at once (BullMQ took the first for stalled on a loaded
    // machine, and the claim's fast path let the second run) and the other one's batch is still in
    // flight on a live worker: settling now would say paused while that batch may yet plan and
    // commit. Its own finish settles the pause; if it is fenced off or dies, its job's next delivery
    // settles it at the claim (claim-batch-turn.ts). So does another partition group's batch in flight.
    if (run.desired !== "running" && ((!mine && t.batchInFlight) || t.othersInFlight))
      return { kind: "stale" };
    if (run.desired !== "running")
      return {
        kind: "settled",
        status: await settlePending(tx, run, turn.workerId, "after the in-flight batch committed"),
      };
    if (next.drained) {
      if (group) {
        await tx.pipelineRunGroup.update({
          where: {
            pipelineVersionId_groupNo: { pipelineVersionId: turn.pipelineVersionId, groupNo: group.no },
          },
          data: { drained: true, nextBatchAt: null },
        });
        const running = await tx.pipelineRunGroup.count({
          where: { pipelineVersionId: turn.pipelineVersionId, runSeq: run.seq, drained: false },
        });
        if (running > 0) return { kind: "group-drained" };
      }
      await tx.pipelineRun.update({
        where: { pipelineVersionId: turn.pipelineVersionId },
        data: { status: "stopped", desiredState: "stopped", nextBatchAt: null },
      });
      await recordTransition(tx, turn.pipelineVersionId, {
        action: "drained",
        from: "running",
        to: "stopped",
        desired: "stopped",
        actor: `worker:${turn.workerId}`,
        reason: group
          ? `trigger availableNow: the backlog of all ${group.of} partition groups is drained`
          : "trigger availableNow: the backlog is drained",
      });
      return { kind: "drained" };
    }
    const seq = (group ? group.seq : turn.seq) + 1;
    await updateTurn(tx, turn, { scheduleSeq: seq, nextBatchAt: new Date(Date.now() + next.delayMs) });
    return { kind: "next", seq, delayMs: next.delayMs };
  });
}

/** The columns that end this worker's batch in flight (a stale delivery's may be another worker's). */
const releaseMine = (workerId: string) => ({
  batch_started_at: sql<Date | null>`CASE WHEN batch_worker_id = ${workerId} THEN NULL ELSE batch_started_at END`,
  batch_worker_id: sql<
    string | null
  >`CASE WHEN batch_worker_id = ${workerId} THEN NULL ELSE batch_worker_id END`,
});

/** Fast path, one statement: still the current turn of a running version that should keep running. */
async function advanceFast(
  db: PrismaClient,
  turn: TBatchTurnRef,
  committed: boolean,
  delayMs: number,
): Promise<number | undefined> {
  const lastBatchAt = committed ? new Date() : null;
  const advanced = await firstRowOf(
    db,
    tables
      .updateTable("pipeline_runs")
      .set((eb) => ({
        schedule_seq: eb("schedule_seq", "+", 1),
        consecutive_failures: 0,
        unfinished_attempts: 0,
        next_batch_at: new Date(Date.now() + delayMs),
        last_batch_at: eb.fn.coalesce(sql<Date | null>`${lastBatchAt}::timestamptz`, "last_batch_at"),
        updated_at: sql`now()`,
        ...releaseMine(turn.workerId),
      }))
      .where("pipeline_version_id", "=", turn.pipelineVersionId)
      .where("schedule_seq", "=", turn.seq)
      .where("status", "=", "running")
      .where("desired_state", "=", "running")
      .returning("schedule_seq"),
  );
  return advanced?.schedule_seq;
}

/** A group's fast path: its row of the current run turn, the version's run row held FOR SHARE (run-groups.ts). */
async function advanceGroupFast(
  db: PrismaClient,
  turn: TBatchTurnRef,
  group: TGroupTurnRef,
  committed: boolean,
  delayMs: number,
): Promise<number | undefined> {
  const rows = await db.$queryRaw<{ schedule_seq: number }[]>`
    WITH r AS (SELECT pipeline_version_id FROM pipeline_runs
                WHERE pipeline_version_id = ${turn.pipelineVersionId} AND schedule_seq = ${turn.seq}
                  AND status = 'running' AND desired_state = 'running' FOR SHARE)
    UPDATE pipeline_run_groups g
       SET schedule_seq = g.schedule_seq + 1, consecutive_failures = 0, unfinished_attempts = 0,
           next_batch_at = ${new Date(Date.now() + delayMs)}::timestamptz,
           last_batch_at = CASE WHEN ${committed} THEN now() ELSE g.last_batch_at END, updated_at = now(),
           batch_started_at = CASE WHEN g.batch_worker_id = ${turn.workerId} THEN NULL ELSE g.batch_started_at END,
           batch_worker_id = CASE WHEN g.batch_worker_id = ${turn.workerId} THEN NULL ELSE g.batch_worker_id END
      FROM r
     WHERE g.pipeline_version_id = r.pipeline_version_id AND g.group_no = ${group.no} AND g.run_seq = ${turn.seq}
       AND g.schedule_seq = ${group.seq} AND NOT g.drained
    RETURNING g.schedule_seq`;
  return rows[0]?.schedule_seq;
}
