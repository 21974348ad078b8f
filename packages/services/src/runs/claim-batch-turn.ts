// A worker's first step for a batch job: may this job run a batch now? Only the job of the current
// scheduling turn of a running version may; a job of an older turn is stale (its work was done or
// superseded), and a pause or stop that was asked for is settled here instead of running a batch.
// Correctness does not depend on this check — the engine's lease fences — but it keeps stray jobs
// (double-enqueued, replayed after a Redis loss) from running extra batches.
//
// The claim also counts the attempt, durably and before any of the batch runs: a batch that kills
// every worker that runs it is failed here, at its next claim, instead of looping (poison-batch.ts).
//
// A version read in partition groups (run-groups.ts) has one job per group turn: its claim takes the
// version's run row FOR SHARE and the group's row, and a pending pause settles only when no other
// group has a batch in flight. The run turn's own job fans out to the groups' first jobs.
import { countOf, sql, tables, type PrismaClient } from "@sluice/db";
import { nextBatchId, nextBatchIdSql, nextGroupBatchId, nextGroupBatchIdSql } from "@sluice/engine";
import { prismaSqlClient } from "../change-requests/prisma-sql-client";
import type { TGroupTurnRef, TScheduledRun } from "./scheduled-turn";
import { DEFAULT_MAX_UNFINISHED_ATTEMPTS, failPoisonBatch, isPoisoned } from "./poison-batch";
import {
  clearGroupsInFlight,
  fanOutGroups,
  lockGroupTurn,
  partitionGroupsOfVersion,
  partitionGroupsSql,
  updateTurn,
  versionTurn,
  type TLockedTurn,
} from "./run-groups";
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
  | { kind: "poisoned"; batchId: number; message: string }
  /** The run turn of a grouped version: its groups' rows are written; queue these groups' turns. */
  | { kind: "fan-out"; groups: TScheduledRun[] };

export interface TBatchTurnRef {
  pipelineVersionId: string;
  seq: number;
  /** workers.id of the worker holding the job. */
  workerId: string;
  /** A partition group's turn (`seq` is then the version's run turn it belongs to). */
  group?: TGroupTurnRef;
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
  const fast = turn.group ? await claimGroupFast(db, turn, turn.group, max) : await claimFast(db, turn, max);
  if (fast !== undefined) return { kind: "run", seq: turn.seq, consecutiveFailures: fast };
  return inTransaction(db, async (tx) => {
    const run = await lockRun(tx, turn.pipelineVersionId);
    if (run.status !== "running") return { kind: "idle", status: run.status };
    const stale = { kind: "stale", currentSeq: run.seq, running: run.desired === "running" } as const;
    if (run.seq !== turn.seq) return stale;
    let t: TLockedTurn;
    if (turn.group) {
      const g = await lockGroupTurn(tx, run, turn.group.no);
      if (!g || g.seq !== turn.group.seq || g.drained) return stale;
      t = g;
    } else {
      const groups = await partitionGroupsOfVersion(tx, turn.pipelineVersionId);
      if (groups > 1) return fanOut(tx, run, groups, turn.workerId);
      t = versionTurn(run);
    }
    if (run.desired !== "running") {
      // Settling now under a batch that is still running would let it commit after the version says
      // paused. That happens when BullMQ delivers the job again while the first delivery runs (it took
      // the first for stalled on a loaded machine), or while another partition group's batch runs:
      // the worker in flight settles after its commit, or, if it dies, its heartbeat expires and a
      // later delivery of this turn settles here.
      if (t.batchInFlight && (t.batchWorkerId !== turn.workerId || opts.inFlightHere))
        return { kind: "busy", workerId: t.batchWorkerId! };
      if (t.othersInFlight) return { kind: "busy", workerId: t.othersInFlight };
      return {
        kind: "settled",
        status: await settlePending(tx, run, turn.workerId, "no batch was in flight"),
      };
    }
    const sqlClient = prismaSqlClient(tx);
    const batchId = turn.group
      ? await nextGroupBatchId(sqlClient, turn.pipelineVersionId, turn.group)
      : await nextBatchId(sqlClient, turn.pipelineVersionId);
    if (isPoisoned(t, batchId, max))
      return { kind: "poisoned", batchId, message: await failPoisonBatch(tx, t, turn.workerId, batchId) };
    await updateTurn(tx, turn, {
      batchStartedAt: new Date(),
      batchWorkerId: turn.workerId,
      nextBatchAt: null,
      updatedAt: new Date(),
      attemptBatchId: batchId,
      unfinishedAttempts: t.attemptBatchId === batchId ? t.unfinishedAttempts + 1 : 1,
    });
    return { kind: "run", seq: turn.seq, consecutiveFailures: t.consecutiveFailures };
  });
}

/**
 * Fast path, one statement: the usual case, the current turn of a running version (not read in
 * groups) whose next batch has not already been started `max` times without finishing. It counts
 * this attempt; undefined when the slow path must decide. Left raw: the next batch id is the engine's
 * SQL on its checkpoints table (nextBatchIdSql), which stays the engine's.
 */
async function claimFast(db: PrismaClient, turn: TBatchTurnRef, max: number): Promise<number | undefined> {
  const claimed = await db.$queryRawUnsafe<{ failures: number }[]>(
    `UPDATE pipeline_runs r SET batch_started_at = now(), batch_worker_id = $1, next_batch_at = NULL, updated_at = now(),
            unfinished_attempts = CASE WHEN r.attempt_batch_id = n.batch_id THEN r.unfinished_attempts + 1 ELSE 1 END,
            attempt_batch_id = n.batch_id
       FROM (SELECT ${nextBatchIdSql("$2")} AS batch_id) n, pipeline_versions v
      WHERE r.pipeline_version_id = $2 AND r.schedule_seq = $3 AND r.status = 'running' AND r.desired_state = 'running'
        AND v.id = r.pipeline_version_id AND ${partitionGroupsSql("v.spec")} = 1
        AND NOT (r.attempt_batch_id IS NOT DISTINCT FROM n.batch_id AND r.unfinished_attempts >= $4)
     RETURNING r.consecutive_failures AS failures`,
    turn.workerId,
    turn.pipelineVersionId,
    turn.seq,
    max,
  );
  return claimed[0]?.failures;
}

/**
 * A group's fast path: the same, on the group's row of the current run turn, with the version's run
 * row held FOR SHARE — a pause (which takes it FOR UPDATE) waits for the claim and then sees this
 * group in flight, or the claim waits for the pause and finds the version no longer running.
 */
async function claimGroupFast(
  db: PrismaClient,
  turn: TBatchTurnRef,
  group: TGroupTurnRef,
  max: number,
): Promise<number | undefined> {
  const claimed = await db.$queryRawUnsafe<{ failures: number }[]>(
    `WITH r AS (SELECT pipeline_version_id FROM pipeline_runs
                 WHERE pipeline_version_id = $2 AND schedule_seq = $3 AND status = 'running' AND desired_state = 'running'
                 FOR SHARE)
     UPDATE pipeline_run_groups g SET batch_started_at = now(), batch_worker_id = $1, next_batch_at = NULL, updated_at = now(),
            unfinished_attempts = CASE WHEN g.attempt_batch_id = n.batch_id THEN g.unfinished_attempts + 1 ELSE 1 END,
            attempt_batch_id = n.batch_id
       FROM r, (SELECT ${nextGroupBatchIdSql("$2", group)} AS batch_id) n
      WHERE g.pipeline_version_id = r.pipeline_version_id AND g.group_no = $5 AND g.run_seq = $3 AND g.schedule_seq = $6
        AND NOT g.drained
        AND NOT (g.attempt_batch_id IS NOT DISTINCT FROM n.batch_id AND g.unfinished_attempts >= $4)
     RETURNING g.consecutive_failures AS failures`,
    turn.workerId,
    turn.pipelineVersionId,
    turn.seq,
    max,
    group.no,
    group.seq,
  );
  return claimed[0]?.failures;
}

/**
 * The job's claimed turn is still its own: the version's turn (or its group's) has not moved on and
 * names this worker's batch in flight. A worker asks after opening a runner, which took the lease: a
 * lifecycle change made between the claim and then (a promotion stopping blue, a stop) fenced the old
 * lease and moved the turn on, and re-taking the lease must not undo it. A change after this check
 * fences the lease again, and the batch's commit with it.
 */
export async function holdsBatchTurn(db: PrismaClient, turn: TBatchTurnRef): Promise<boolean> {
  const rows = turn.group
    ? await db.$queryRawUnsafe<unknown[]>(
        `SELECT 1 FROM pipeline_runs r
           JOIN pipeline_run_groups g ON g.pipeline_version_id = r.pipeline_version_id AND g.run_seq = r.schedule_seq
          WHERE r.pipeline_version_id = $1 AND r.schedule_seq = $2 AND g.group_no = $3 AND g.schedule_seq = $4
            AND g.batch_worker_id = $5`,
        turn.pipelineVersionId,
        turn.seq,
        turn.group.no,
        turn.group.seq,
        turn.workerId,
      )
    : await db.$queryRawUnsafe<unknown[]>(
        `SELECT 1 FROM pipeline_runs WHERE pipeline_version_id = $1 AND schedule_seq = $2 AND batch_worker_id = $3`,
        turn.pipelineVersionId,
        turn.seq,
        turn.workerId,
      );
  return rows.length > 0;
}

/** The run turn's job of a grouped version: fan out to the groups, or settle a pending pause/stop. */
async function fanOut(tx: TTx, run: TLockedRun, groups: number, workerId: string): Promise<TBatchTurnClaim> {
  if (run.desired === "running") return { kind: "fan-out", groups: await fanOutGroups(tx, run, groups) };
  // A group's batch in flight on a live worker: that group's finish settles the pause or stop.
  const g0 = run.batchInFlight ? await lockGroupTurn(tx, run, 0) : null;
  const inFlightOn = g0?.batchInFlight ? g0.batchWorkerId : (g0?.othersInFlight ?? null);
  if (inFlightOn) return { kind: "busy", workerId: inFlightOn };
  return { kind: "settled", status: await settlePending(tx, run, workerId, "no batch was in flight") };
}

export async function releaseBatchAttempt(
  db: PrismaClient,
  turn: TBatchTurnRef,
  opts: { inFlightHere?: boolean } = {},
): Promise<void> {
  const mine = opts.inFlightHere ? sql<boolean>`false` : sql<boolean>`batch_worker_id = ${turn.workerId}`;
  const release = <T extends "pipeline_runs" | "pipeline_run_groups">(table: T) =>
    tables
      .updateTable(table as "pipeline_runs")
      .set((eb) => ({
        unfinished_attempts: eb.fn("greatest", [eb("unfinished_attempts", "-", 1), eb.lit(0)]),
        batch_started_at: eb.case().when(mine).then(eb.lit(null)).else(eb.ref("batch_started_at")).end(),
        batch_worker_id: eb.case().when(mine).then(eb.lit(null)).else(eb.ref("batch_worker_id")).end(),
      }))
      .where("pipeline_version_id", "=", turn.pipelineVersionId);
  if (turn.group)
    await countOf(
      db,
      release("pipeline_run_groups")
        .where(sql<boolean>`group_no = ${turn.group.no} AND run_seq = ${turn.seq}`)
        .where("schedule_seq", "=", turn.group.seq),
    );
  else await countOf(db, release("pipeline_runs").where("schedule_seq", "=", turn.seq));
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
  await clearGroupsInFlight(tx, run.pipelineVersionId);
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
