// The checkpoint and the lease (fencing) of a pipeline version: the one module that reads and writes
// the `checkpoints` table for the rest of Sluice. Services, workers, the CLI and the console call these
// functions (a SqlClient in — a pg pool or client, or services' prismaSqlClient over a Prisma
// transaction — typed values out) instead of writing their own SQL against the table, so its columns,
// their types (bigint as text from pg, BigInt from Prisma) and the fencing rules live here only.
// A few read models join the checkpoint into a bigger statement (the fleet's one-statement read, the
// running rollouts, a claim's single UPDATE): splitting those into a second query would cost a round
// trip per row or lose the statement's atomicity, so the engine gives them SQL fragments instead
// (checkpointJoinSql, nextBatchIdSql) — the table is still named only here.
// Batch commits (commit-batch.ts), registration (register-version.ts) and the serving switch
// (switch-serving.ts) write the row inside their own transactions, next to the tables they change.
import type { PartitionClocks } from "../batch/partition-watermark";
import { FencedError, SupersededError } from "../errors";
import type { OutputCheckpoints } from "../output/output-time";
import type { DimensionCheckpoint } from "../join/dimension-reader";
import { dropUncommittedPlans } from "./offset-log-store";
import type { SqlClient } from "./sql-client";

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

export async function ensureCheckpoint(db: SqlClient, pipelineVersionId: string): Promise<void> {
  await db.query(`INSERT INTO checkpoints (pipeline_version_id) VALUES ($1) ON CONFLICT DO NOTHING`, [
    pipelineVersionId,
  ]);
}

/**
 * Take over the pipeline version: bump the fencing epoch. Any runner holding an older epoch can no
 * longer plan or commit, so at most one runner's commits are accepted — whatever BullMQ or a user
 * starting two processes does.
 */
export async function acquireLease(db: SqlClient, pipelineVersionId: string, owner: string): Promise<number> {
  const res = await db.query<{ lease_epoch: string }>(
    `UPDATE checkpoints c SET lease_epoch = lease_epoch + 1, lease_owner = $2, lease_at = now()
      WHERE c.pipeline_version_id = $1 AND NOT EXISTS (SELECT 1 FROM pipeline_versions v WHERE v.id = $1 AND v.superseded_by_id IS NOT NULL)
      RETURNING lease_epoch`,
    [pipelineVersionId, owner],
  );
  if (res.rows[0]) return Number(res.rows[0].lease_epoch);
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

/** The row as stored: the checkpoint and who holds the lease. */
export interface StoredCheckpoint extends Checkpoint {
  /** The worker (or `change-request:<id>`, `superseded`, …) that last took or fenced the lease. */
  leaseOwner: string | null;
  /** When a commit, a reset or a recorded start last changed it. */
  updatedAt: Date;
}

interface CheckpointRow {
  last_batch_id: string | bigint;
  end_offsets: Record<string, number>;
  watermark: Date | null;
  event_time_max: Checkpoint["eventTimeMax"];
  state_rows: string | bigint;
  state_bytes: string | bigint;
  lease_epoch: string | bigint;
  lease_owner: string | null;
  outputs: OutputCheckpoints;
  dimension: DimensionCheckpoint;
  updated_at: Date;
}

/** A version's checkpoint; undefined when it has none (never registered through the engine). */
export async function findCheckpoint(
  db: SqlClient,
  pipelineVersionId: string,
  forUpdate = false,
): Promise<StoredCheckpoint | undefined> {
  const res = await db.query<CheckpointRow>(
    `SELECT last_batch_id, end_offsets, watermark, event_time_max, state_rows, state_bytes, lease_epoch, lease_owner, outputs, dimension, updated_at
       FROM checkpoints WHERE pipeline_version_id = $1${forUpdate ? " FOR UPDATE" : ""}`,
    [pipelineVersionId],
  );
  const r = res.rows[0];
  if (!r) return undefined;
  return {
    lastBatchId: Number(r.last_batch_id),
    endOffsets: r.end_offsets,
    watermark: r.watermark,
    eventTimeMax: r.event_time_max,
    stateRows: Number(r.state_rows),
    stateBytes: Number(r.state_bytes),
    leaseEpoch: Number(r.lease_epoch),
    leaseOwner: r.lease_owner,
    outputs: r.outputs,
    dimension: r.dimension,
    updatedAt: r.updated_at,
  };
}

export async function loadCheckpoint(
  db: SqlClient,
  pipelineVersionId: string,
  forUpdate = false,
): Promise<StoredCheckpoint> {
  const cp = await findCheckpoint(db, pipelineVersionId, forUpdate);
  if (!cp) throw new Error(`no checkpoint row for pipeline version ${pipelineVersionId}`);
  return cp;
}

/**
 * Lock a version's checkpoint (creating it if missing) for a change that rewrites it — an approved
 * checkpoint reset or schema change, in the approval's transaction. A batch commit locks the row
 * too, so the change and a commit are serialised.
 */
export async function lockCheckpoint(db: SqlClient, pipelineVersionId: string): Promise<StoredCheckpoint> {
  await ensureCheckpoint(db, pipelineVersionId);
  return loadCheckpoint(db, pipelineVersionId, true);
}

/**
 * Move a version's offsets (a checkpoint reset): bump the lease epoch so a runner in flight is fenced,
 * merge `offsets` into the end offsets, optionally clear what the checkpoint keeps of the state, and
 * drop the plans recorded after the last committed batch so nothing re-reads the old range.
 * Call it after lockCheckpoint, in the same transaction.
 */
export async function resetCheckpoint(
  db: SqlClient,
  pipelineVersionId: string,
  reset: { afterBatchId: number; offsets: Record<string, number>; owner: string; clearState: boolean },
): Promise<void> {
  await db.query(
    `UPDATE checkpoints
        SET end_offsets = $2::jsonb,
            lease_epoch = lease_epoch + 1, lease_owner = $3, lease_at = now(), updated_at = now(),
            state_rows = CASE WHEN $4::boolean THEN 0 ELSE state_rows END,
            state_bytes = CASE WHEN $4::boolean THEN 0 ELSE state_bytes END,
            watermark = CASE WHEN $4::boolean THEN NULL ELSE watermark END,
            event_time_max = CASE WHEN $4::boolean THEN '{}'::jsonb ELSE event_time_max END,
            outputs = CASE WHEN $4::boolean THEN '{}'::jsonb ELSE outputs END,
            dimension = CASE WHEN $4::boolean THEN '{}'::jsonb ELSE dimension END
      WHERE pipeline_version_id = $1`,
    [pipelineVersionId, JSON.stringify(reset.offsets), reset.owner, reset.clearState],
  );
  await dropUncommittedPlans(db, pipelineVersionId, reset.afterBatchId);
}

/**
 * Where a version that has not committed a batch yet will start reading (a rollout's candidate starts
 * at chosen offsets). A no-op once it committed a batch: its checkpoint then says where it is.
 */
export async function presetStartingOffsets(
  db: SqlClient,
  pipelineVersionId: string,
  offsets: Record<string, number>,
): Promise<void> {
  await db.query(
    `UPDATE checkpoints SET end_offsets = $2::jsonb, updated_at = now() WHERE pipeline_version_id = $1 AND last_batch_id = -1`,
    [pipelineVersionId, JSON.stringify(offsets)],
  );
}

/** The lease epoch of a version (undefined without a checkpoint): a warm runner holding another is stale. */
export async function readLeaseEpoch(db: SqlClient, pipelineVersionId: string): Promise<number | undefined> {
  const res = await db.query<{ lease_epoch: string }>(
    `SELECT lease_epoch FROM checkpoints WHERE pipeline_version_id = $1`,
    [pipelineVersionId],
  );
  const row = res.rows[0];
  return row ? Number(row.lease_epoch) : undefined;
}

/** Who holds the lease of each of these versions (versions without a checkpoint are absent). */
export async function readLeaseOwners(
  db: SqlClient,
  pipelineVersionIds: string[],
): Promise<Map<string, string | null>> {
  const res = await db.query<{ pipeline_version_id: string; lease_owner: string | null }>(
    `SELECT pipeline_version_id, lease_owner FROM checkpoints WHERE pipeline_version_id = ANY($1)`,
    [pipelineVersionIds],
  );
  return new Map(res.rows.map((r) => [r.pipeline_version_id, r.lease_owner]));
}

/**
 * SQL for the id of the batch after a version's checkpoint (0 before its first batch, or without a
 * checkpoint); `versionId` is a parameter placeholder or column. For a statement that must decide in
 * one step (claim-batch-turn.ts's fast path); nextBatchId runs it alone.
 */
export function nextBatchIdSql(versionId: string): string {
  return `coalesce((SELECT last_batch_id + 1 FROM checkpoints WHERE pipeline_version_id = ${versionId}), 0)`;
}

/** The batch after a version's checkpoint (0 before its first batch). */
export async function nextBatchId(db: SqlClient, pipelineVersionId: string): Promise<number> {
  const res = await db.query<{ next: string | bigint }>(`SELECT ${nextBatchIdSql("$1")} AS next`, [
    pipelineVersionId,
  ]);
  return Number(res.rows[0]!.next);
}

/**
 * `LEFT JOIN` of the checkpoint of the version `versionId` (a column) as `alias`, for a read model
 * that shows it beside other tables in one statement. Its columns are CheckpointRow's (above).
 */
export function checkpointJoinSql(alias: string, versionId: string): string {
  return `LEFT JOIN checkpoints ${alias} ON ${alias}.pipeline_version_id = ${versionId}`;
}

/**
 * Record where a version that has read nothing yet starts (`startingOffsets: latest`: the log end of
 * each partition when it first runs), so every later plan — after a restart too — starts there.
 * Written once: only while the checkpoint names no offsets and no batch was committed, and only by
 * the lease holder. Returns the recorded start, whoever recorded it.
 */
export async function recordStartingOffsets(
  db: SqlClient,
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
