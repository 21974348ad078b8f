// The offset log of a pipeline version: each batch's plan (its Kafka ranges, or a dead-letter
// replay's items), recorded before it reads so a batch re-run after a crash reads exactly the same
// records. The one module that reads and writes `offset_log` for the rest of Sluice: services, the
// workers and the CLI call these functions (a SqlClient in, typed values out). Registration copies a
// continued version's log inside its own transaction (register-version.ts).
import type { OffsetRange } from "../source/source";
import { FencedError } from "../errors";
import type { ReplayPlan } from "./replay-store";
import type { SqlClient } from "./sql-client";
import { LINEAGE_SQL } from "./version-lineage";

/** A recorded plan: Kafka ranges, or (a dead-letter replay batch) no range and the replay items. */
export interface RecordedPlan {
  ranges: OffsetRange[];
  replay: ReplayPlan | null;
  plannedAt: Date;
}

/** The plan of a batch, if it was planned (and perhaps not committed) before. */
export async function findPlannedBatch(
  db: SqlClient,
  pipelineVersionId: string,
  batchId: number,
): Promise<RecordedPlan | undefined> {
  const res = await db.query<RecordedPlan>(
    `SELECT ranges, replay, planned_at AS "plannedAt" FROM offset_log WHERE pipeline_version_id = $1 AND batch_id = $2`,
    [pipelineVersionId, batchId],
  );
  return res.rows[0];
}

/**
 * Record a batch's plan before reading (deterministic replay). Fenced: only the current lease holder
 * may plan, and only the batch after the last committed one. If another runner recorded a plan for
 * the same batch first, that plan wins and is returned.
 *
 * FOR SHARE waits for a transaction rewriting the checkpoint (a checkpoint reset bumps the epoch and
 * drops uncommitted plans) and re-checks the epoch after it: without the lock a plan from the old
 * offsets could be inserted while the reset is uncommitted, survive it, and be replayed afterwards.
 */
export async function recordPlan(
  db: SqlClient,
  pipelineVersionId: string,
  batchId: number,
  epoch: number,
  ranges: OffsetRange[],
  replay?: ReplayPlan,
): Promise<RecordedPlan> {
  await db.query(
    `INSERT INTO offset_log (pipeline_version_id, batch_id, ranges, replay)
     SELECT $1, $2::bigint, $3::jsonb, $5::jsonb FROM checkpoints
      WHERE pipeline_version_id = $1 AND lease_epoch = $4 AND last_batch_id = $2::bigint - 1
        FOR SHARE
     ON CONFLICT DO NOTHING`,
    [pipelineVersionId, batchId, JSON.stringify(ranges), epoch, replay ? JSON.stringify(replay) : null],
  );
  const stored = await findPlannedBatch(db, pipelineVersionId, batchId);
  if (!stored)
    throw new FencedError(
      `pipeline version ${pipelineVersionId}: another runner took over before batch ${batchId} was planned`,
    );
  return stored;
}

/** Forget the plans after `afterBatchId` (planned, never committed): a checkpoint reset moved the offsets. */
export async function dropUncommittedPlans(
  db: SqlClient,
  pipelineVersionId: string,
  afterBatchId: number,
): Promise<void> {
  await db.query(`DELETE FROM offset_log WHERE pipeline_version_id = $1 AND batch_id > $2`, [
    pipelineVersionId,
    afterBatchId,
  ]);
}

/** The batch after the checkpoint, when it was planned and not committed: an earlier run that died in it? */
export async function findUnfinishedPlan(
  db: SqlClient,
  pipelineVersionId: string,
): Promise<{ batchId: number; ranges: OffsetRange[]; plannedAt: Date } | undefined> {
  const res = await db.query<{ batch_id: string; ranges: OffsetRange[]; planned_at: Date }>(
    `SELECT o.batch_id, o.ranges, o.planned_at FROM checkpoints c
       JOIN offset_log o ON o.pipeline_version_id = c.pipeline_version_id AND o.batch_id = c.last_batch_id + 1
      WHERE c.pipeline_version_id = $1`,
    [pipelineVersionId],
  );
  const row = res.rows[0];
  return row ? { batchId: Number(row.batch_id), ranges: row.ranges, plannedAt: row.planned_at } : undefined;
}

/**
 * Where a version's lineage (itself and the versions whose checkpoint it continued) read its first
 * Kafka batch: per partition, its first offset; null before any batch.
 */
export async function firstLineageOffsets(
  db: SqlClient,
  pipelineVersionId: string,
): Promise<Record<string, number> | null> {
  const res = await db.query<{ ranges: { partition: number; from: number | string }[] }>(
    `WITH RECURSIVE ${LINEAGE_SQL}
     SELECT o.ranges FROM lineage l JOIN offset_log o ON o.pipeline_version_id = l.id AND o.replay IS NULL
      ORDER BY l.depth DESC, o.batch_id ASC LIMIT 1`,
    [pipelineVersionId],
  );
  const first = res.rows[0];
  if (!first) return null;
  return Object.fromEntries(first.ranges.map((r) => [String(r.partition), Number(r.from)]));
}
