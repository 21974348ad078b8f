// The offset log of a pipeline version: each batch's plan (its Kafka ranges, or a dead-letter
// replay's items), recorded before it reads so a batch re-run after a crash reads exactly the same
// records. The one module that reads and writes `offset_log` for the rest of Sluice: services, the
// workers and the CLI call these functions (a SqlClient in, typed values out). Registration copies a
// continued version's log inside its own transaction (register-version.ts).
import type { OffsetRange } from "../source/source";
import { FencedError } from "../errors";
import type { GroupLease, PartitionGroup } from "./partition-group";
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
 * the same batch first, that plan wins and is returned. `lease` is the runner's epoch, or a partition
 * group's lease (group-checkpoint-store.ts): then the group's row must hold that epoch and batch
 * `batchId - N`, and the version's row the epoch the group's lease was taken under.
 *
 * FOR SHARE waits for a transaction rewriting the checkpoint (a checkpoint reset bumps the epoch and
 * drops uncommitted plans) and re-checks the epoch after it: without the lock a plan from the old
 * offsets could be inserted while the reset is uncommitted, survive it, and be replayed afterwards.
 */
export async function recordPlan(
  db: SqlClient,
  pipelineVersionId: string,
  batchId: number,
  lease: number | GroupLease,
  ranges: OffsetRange[],
  replay?: ReplayPlan,
): Promise<RecordedPlan> {
  const plan = [pipelineVersionId, batchId, JSON.stringify(ranges), replay ? JSON.stringify(replay) : null];
  if (typeof lease === "number")
    await db.query(
      `INSERT INTO offset_log (pipeline_version_id, batch_id, ranges, replay)
       SELECT $1, $2::bigint, $3::jsonb, $4::jsonb FROM checkpoints
        WHERE pipeline_version_id = $1 AND lease_epoch = $5 AND last_batch_id = $2::bigint - 1
          FOR SHARE
       ON CONFLICT DO NOTHING`,
      [...plan, lease],
    );
  else
    await db.query(
      `INSERT INTO offset_log (pipeline_version_id, batch_id, ranges, replay)
       SELECT $1, $2::bigint, $3::jsonb, $4::jsonb FROM group_checkpoints g JOIN checkpoints c ON c.pipeline_version_id = g.pipeline_version_id
        WHERE g.pipeline_version_id = $1 AND g.group_no = $5 AND g.lease_epoch = $6 AND g.last_batch_id = $2::bigint - $7
          AND c.lease_epoch = $8
          FOR SHARE
       ON CONFLICT DO NOTHING`,
      [...plan, lease.group.no, lease.epoch, lease.group.of, lease.versionEpoch],
    );
  const stored = await findPlannedBatch(db, pipelineVersionId, batchId);
  if (!stored)
    throw new FencedError(
      `pipeline version ${pipelineVersionId}: another runner took over before batch ${batchId} was planned`,
    );
  return stored;
}

/**
 * Forget the plans after `afterBatchId` (planned, never committed): a checkpoint reset moved the
 * offsets. With partition groups a group's planned batch may have a lower id than another group's
 * last commit: any plan after the slowest group's last batch that has no commit goes too.
 */
export async function dropUncommittedPlans(
  db: SqlClient,
  pipelineVersionId: string,
  afterBatchId: number,
): Promise<void> {
  await db.query(
    `DELETE FROM offset_log o WHERE o.pipeline_version_id = $1
        AND (o.batch_id > $2
          OR (o.batch_id > (SELECT min(last_batch_id) FROM group_checkpoints WHERE pipeline_version_id = $1)
              AND NOT EXISTS (SELECT 1 FROM batch_log b WHERE b.pipeline_version_id = $1 AND b.batch_id = o.batch_id)))`,
    [pipelineVersionId, afterBatchId],
  );
}

/**
 * The batch after the checkpoint — or after a partition group's last batch, for that group — when it
 * was planned and not committed: an earlier run that died in it?
 */
export async function findUnfinishedPlan(
  db: SqlClient,
  pipelineVersionId: string,
  group?: PartitionGroup,
): Promise<{ batchId: number; ranges: OffsetRange[]; plannedAt: Date } | undefined> {
  const res = await db.query<{ batch_id: string; ranges: OffsetRange[]; planned_at: Date }>(
    group
      ? `SELECT o.batch_id, o.ranges, o.planned_at FROM group_checkpoints g
           JOIN offset_log o ON o.pipeline_version_id = g.pipeline_version_id AND o.batch_id = g.last_batch_id + $3::int
          WHERE g.pipeline_version_id = $1 AND g.group_no = $2::int`
      : `SELECT o.batch_id, o.ranges, o.planned_at FROM checkpoints c
           JOIN offset_log o ON o.pipeline_version_id = c.pipeline_version_id AND o.batch_id = c.last_batch_id + 1
          WHERE c.pipeline_version_id = $1`,
    group ? [pipelineVersionId, group.no, group.of] : [pipelineVersionId],
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
