// The checkpoint, the lease (fencing) and the offset log of a pipeline version.
import type pg from "pg";
import type { OffsetRange } from "../source/source";
import type { PartitionClocks } from "../batch/partition-watermark";
import { FencedError, SupersededError } from "../errors";
import type { ReplayPlan } from "./replay-store";
import type { OutputCheckpoints } from "../output/output-time";
import type { DimensionCheckpoint } from "../join/dimension-reader";

/** A recorded plan: Kafka ranges, or (a dead-letter replay batch) no range and the replay items. */
export interface RecordedPlan {
  ranges: OffsetRange[];
  replay: ReplayPlan | null;
}

export interface Checkpoint {
  lastBatchId: number;
  endOffsets: Record<string, number>;
  watermark: Date | null;
  /** Highest event time and dedup time seen, and per partition its max event time and last data (the watermark follows them). */
  eventTimeMax: { eventTime?: string; dedupTime?: string; partitions?: PartitionClocks };
  stateRows: number;
  stateBytes: number;
  leaseEpoch: number;
  /** Several outputs or a join: each output's watermark and state size (output/output-time.ts). */
  outputs: OutputCheckpoints;
  /** A join: its changelog offsets, clocks, watermark and state (join/dimension-reader.ts). */
  dimension: DimensionCheckpoint;
}

export async function ensureCheckpoint(db: pg.Pool, pipelineVersionId: string): Promise<void> {
  await db.query(`INSERT INTO checkpoints (pipeline_version_id) VALUES ($1) ON CONFLICT DO NOTHING`, [
    pipelineVersionId,
  ]);
}

/**
 * Take over the pipeline version: bump the fencing epoch. Any runner holding an older epoch can no
 * longer plan or commit, so at most one runner's commits are accepted — whatever BullMQ or a user
 * starting two processes does.
 */
export async function acquireLease(db: pg.Pool, pipelineVersionId: string, owner: string): Promise<number> {
  const res = await db.query<{ lease_epoch: string }>(
    `UPDATE checkpoints c SET lease_epoch = lease_epoch + 1, lease_owner = $2, lease_at = now()
      WHERE c.pipeline_version_id = $1 AND NOT EXISTS (SELECT 1 FROM pipeline_versions v WHERE v.id = $1 AND v.superseded_by_id IS NOT NULL)
      RETURNING lease_epoch`,
    [pipelineVersionId, owner],
  );
  if (res.rowCount === 1) return Number(res.rows[0]!.lease_epoch);
  const superseded = await db.query<{ version: number; by: number }>(
    `SELECT v.version, n.version AS by FROM pipeline_versions v JOIN pipeline_versions n ON n.id = v.superseded_by_id WHERE v.id = $1`,
    [pipelineVersionId],
  );
  const s = superseded.rows[0];
  // Its checkpoint is stale: the newer version went on from it. Running it would process again what
  // the newer one did, against old state.
  if (s)
    throw new SupersededError(
      `pipeline version ${s.version} was superseded by version ${s.by}, which continues from its checkpoint; it cannot run again. To go back to its spec, register it again: that makes a new version continuing version ${s.by}'s state.`,
    );
  throw new Error(`no checkpoint row for pipeline version ${pipelineVersionId}`);
}

export async function loadCheckpoint(
  db: pg.Pool | pg.PoolClient,
  pipelineVersionId: string,
  forUpdate = false,
): Promise<Checkpoint> {
  const res = await db.query(
    `SELECT last_batch_id, end_offsets, watermark, event_time_max, state_rows, state_bytes, lease_epoch, lease_owner, outputs, dimension
       FROM checkpoints WHERE pipeline_version_id = $1${forUpdate ? " FOR UPDATE" : ""}`,
    [pipelineVersionId],
  );
  const r = res.rows[0];
  if (!r) throw new Error(`no checkpoint row for pipeline version ${pipelineVersionId}`);
  return {
    lastBatchId: Number(r.last_batch_id),
    endOffsets: r.end_offsets,
    watermark: r.watermark,
    eventTimeMax: r.event_time_max,
    stateRows: Number(r.state_rows),
    stateBytes: Number(r.state_bytes),
    leaseEpoch: Number(r.lease_epoch),
    outputs: r.outputs,
    dimension: r.dimension,
  };
}

/**
 * Record where a version that has read nothing yet starts (`startingOffsets: latest`: the log end of
 * each partition when it first runs), so every later plan — after a restart too — starts there.
 * Written once: only while the checkpoint names no offsets and no batch was committed, and only by
 * the lease holder. Returns the recorded start, whoever recorded it.
 */
export async function recordStartingOffsets(
  db: pg.Pool,
  pipelineVersionId: string,
  epoch: number,
  offsets: Record<string, number>,
): Promise<Record<string, number>> {
  const res = await db.query<{ end_offsets: Record<string, number>; lease_epoch: string }>(
    `WITH started AS (
       UPDATE checkpoints SET end_offsets = $3::jsonb, updated_at = now()
        WHERE pipeline_version_id = $1 AND lease_epoch = $2 AND last_batch_id = -1 AND end_offsets = '{}'::jsonb
       RETURNING end_offsets, lease_epoch)
     SELECT end_offsets, lease_epoch FROM started
     UNION ALL SELECT end_offsets, lease_epoch FROM checkpoints WHERE pipeline_version_id = $1 AND NOT EXISTS (SELECT 1 FROM started)`,
    [pipelineVersionId, epoch, JSON.stringify(offsets)],
  );
  const r = res.rows[0];
  if (!r || Number(r.lease_epoch) !== epoch)
    throw new FencedError(
      `pipeline version ${pipelineVersionId}: another runner took over before its starting offsets were recorded`,
    );
  return r.end_offsets;
}

/** The plan of a batch, if it was planned (and perhaps not committed) before. */
export async function findPlannedBatch(
  db: pg.Pool,
  pipelineVersionId: string,
  batchId: number,
): Promise<RecordedPlan | undefined> {
  const res = await db.query<RecordedPlan>(
    `SELECT ranges, replay FROM offset_log WHERE pipeline_version_id = $1 AND batch_id = $2`,
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
  db: pg.Pool,
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
