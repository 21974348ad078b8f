// Partition groups on the workers (source.kafka.parallelism N > 1, docs/workers.md): a version read in
// N groups runs as N chains of batch jobs, one per group, concurrently on any workers. Its
// pipeline_runs row keeps the one lifecycle — status, desired state and the run's turn that every
// start, resume and restart bumps — and each group has a row in pipeline_run_groups with what one
// chain needs: its own turn, the batch in flight and by whom, attempt and failure counts.
//
// The run's turn is queued as one job, as for any version; for a grouped version that job fans out —
// it writes the N group rows of that run turn and queues each group's first job. Group rows belong to
// the run turn they were fanned out in (run_seq), so a pause settles once no group has a batch in
// flight, a stop and start begins every group afresh, and a job of an older run is stale.
//
// Every write of a group row happens under a lock on the version's run row — FOR SHARE in a group's
// claim and hand-over (groups do not wait for each other), FOR UPDATE in lifecycle commands — so a
// pause that reads "no group in flight" cannot race a group claiming its next batch.
import { rowsOf, tables, type Prisma, type TSqlRunner } from "@sluice/db";
import type { TGroupTurnRef, TScheduledRun } from "./scheduled-turn";
import { workerAliveSql, type TLockedRun, type TTx } from "./run-record";

/** SQL: the group count of the version whose spec is the column `spec`. */
export const partitionGroupsSql = (spec: string): string =>
  `coalesce((${spec}->'source'->'kafka'->>'parallelism')::int, 1)`;

/** The version's group count, from its stored spec. */
export async function partitionGroupsOfVersion(tx: TTx, pipelineVersionId: string): Promise<number> {
  const rows = await tx.$queryRawUnsafe<{ groups: number }[]>(
    `SELECT ${partitionGroupsSql("spec")} AS groups FROM pipeline_versions WHERE id = $1`,
    pipelineVersionId,
  );
  return rows[0]?.groups ?? 1;
}

/** A turn as the claim, the hand-over and the failure path see it: the version's or one group's. */
export type TLockedTurn = TLockedRun & {
  /** Another group of the run has a batch in flight on a live worker (that worker's id). */
  othersInFlight: string | null;
  /** availableNow: the group's backlog is drained and its chain has ended. */
  drained: boolean;
};

/** The version's own turn, seen as a turn: no other group, never drained. */
export const versionTurn = (run: TLockedRun): TLockedTurn => ({
  ...run,
  othersInFlight: null,
  drained: false,
});

/**
 * The turn a job holds, locked: the version's, or its group's row of the current run turn; null when
 * the job belongs to another run turn (or the run has not fanned out to its group). Its own turn may
 * still have moved on (`isCurrentTurn`).
 */
export async function lockTurn(
  tx: TTx,
  run: TLockedRun,
  turn: { seq: number; group?: TGroupTurnRef },
): Promise<TLockedTurn | null> {
  if (run.seq !== turn.seq) return null;
  return turn.group ? lockGroupTurn(tx, run, turn.group.no) : versionTurn(run);
}

/** The locked turn is still the job's: the version's turn, or its group's own turn, has not moved on. */
export const isCurrentTurn = (t: TLockedTurn, turn: { seq: number; group?: TGroupTurnRef }): boolean =>
  t.seq === (turn.group ? turn.group.seq : turn.seq);

/**
 * Lock one group's row of the current run turn (after lockRun locked the version's row), seen as a
 * turn: the version's status and wish, the group's own turn and attempt counts. Null when the run
 * turn has not fanned out to this group (a job of an older run).
 */
export async function lockGroupTurn(tx: TTx, run: TLockedRun, no: number): Promise<TLockedTurn | null> {
  const rows = await tx.$queryRawUnsafe<
    {
      group_no: number;
      schedule_seq: number;
      consecutive_failures: number;
      batch_started_at: Date | null;
      batch_worker_id: string | null;
      attempt_batch_id: bigint | null;
      unfinished_attempts: number;
      drained: boolean;
      alive: boolean;
    }[]
  >(
    `SELECT g.group_no, g.schedule_seq, g.consecutive_failures, g.batch_started_at, g.batch_worker_id,
            g.attempt_batch_id, g.unfinished_attempts, g.drained,
            coalesce(g.batch_started_at IS NOT NULL AND ${workerAliveSql("w")}, false) AS alive
       FROM pipeline_run_groups g LEFT JOIN workers w ON w.id = g.batch_worker_id
      WHERE g.pipeline_version_id = $1 AND g.run_seq = $2
      ORDER BY g.group_no FOR UPDATE OF g`,
    run.pipelineVersionId,
    run.seq,
  );
  const g = rows.find((r) => r.group_no === no);
  if (!g) return null;
  const other = rows.find((r) => r.group_no !== no && r.alive);
  return {
    ...run,
    seq: g.schedule_seq,
    consecutiveFailures: g.consecutive_failures,
    batchStartedAt: g.batch_started_at,
    batchWorkerId: g.batch_worker_id,
    attemptBatchId: g.attempt_batch_id === null ? null : Number(g.attempt_batch_id),
    unfinishedAttempts: g.unfinished_attempts,
    batchInFlight: g.alive,
    othersInFlight: other?.batch_worker_id ?? null,
    drained: g.drained,
  };
}

/**
 * The run turn's job of a grouped version: write a row per group for this run turn (each starting at
 * its turn 0, nothing in flight, counts cleared) unless an earlier delivery of the job did, and return
 * the groups' current turns to queue — the ones not drained.
 */
export async function fanOutGroups(tx: TTx, run: TLockedRun, of: number): Promise<TScheduledRun[]> {
  await tx.$executeRawUnsafe(
    `INSERT INTO pipeline_run_groups (pipeline_version_id, group_no, run_seq, next_batch_at)
     SELECT $1, g, $2, now() FROM generate_series(0, $3::int - 1) AS g
     ON CONFLICT (pipeline_version_id, group_no) DO UPDATE
        SET run_seq = excluded.run_seq, schedule_seq = 0, consecutive_failures = 0, batch_started_at = NULL,
            batch_worker_id = NULL, attempt_batch_id = NULL, unfinished_attempts = 0, drained = false,
            next_batch_at = now(), updated_at = now()
      WHERE pipeline_run_groups.run_seq < excluded.run_seq`,
    run.pipelineVersionId,
    run.seq,
    of,
  );
  return groupTurnsOf(tx, run.pipelineVersionId, run.seq, of);
}

/** The current turns of a run's groups (not drained), to queue. */
async function groupTurnsOf(
  db: TSqlRunner,
  pipelineVersionId: string,
  runSeq: number,
  of: number,
): Promise<TScheduledRun[]> {
  const rows = await rowsOf(
    db,
    tables
      .selectFrom("pipeline_run_groups")
      .select(["group_no", "schedule_seq", "next_batch_at"])
      .where("pipeline_version_id", "=", pipelineVersionId)
      .where("run_seq", "=", runSeq)
      .where("drained", "=", false)
      .orderBy("group_no"),
  );
  return rows.map((r) => groupTurn(pipelineVersionId, runSeq, of, r));
}

/** A group's row of a run turn as the turn to queue. */
export const groupTurn = (
  pipelineVersionId: string,
  runSeq: number,
  of: number,
  r: { group_no: number; schedule_seq: number; next_batch_at: Date | null },
): TScheduledRun => ({
  pipelineVersionId,
  seq: runSeq,
  nextBatchAt: r.next_batch_at,
  group: { no: r.group_no, of, seq: r.schedule_seq },
});

/** The turn fields a version's run row and a group's row share. */
export type TTurnFields = Pick<
  Prisma.PipelineRunGroupUncheckedUpdateInput,
  | "scheduleSeq"
  | "consecutiveFailures"
  | "batchStartedAt"
  | "batchWorkerId"
  | "attemptBatchId"
  | "unfinishedAttempts"
  | "lastBatchAt"
  | "nextBatchAt"
  | "updatedAt"
>;

/** Write a turn's fields on the version's run row, or on the group's row for a group's turn. */
export async function updateTurn(
  tx: TTx,
  turn: { pipelineVersionId: string; group?: TGroupTurnRef },
  data: TTurnFields,
): Promise<void> {
  const { pipelineVersionId, group } = turn;
  if (group)
    await tx.pipelineRunGroup.update({
      where: { pipelineVersionId_groupNo: { pipelineVersionId, groupNo: group.no } },
      data,
    });
  else await tx.pipelineRun.update({ where: { pipelineVersionId }, data });
}

/** A settled run has no batch in flight anywhere: the groups' rows stop saying so too. */
export async function clearGroupsInFlight(tx: TTx, pipelineVersionId: string): Promise<void> {
  await tx.$executeRaw`UPDATE pipeline_run_groups SET batch_started_at = NULL, batch_worker_id = NULL, next_batch_at = NULL
      WHERE pipeline_version_id = ${pipelineVersionId}`;
}
