// Partition groups (`source.kafka.parallelism: N`, docs/partition-groups.md): the part of a version's
// checkpoint that is one per group — its lease, its last committed batch and its partitions' end
// offsets — in `group_checkpoints`, the one module that reads and writes that table. What is one per
// version (watermark, event-time clocks, state totals, the version's lease epoch that resets and schema
// changes bump) stays in `checkpoints`, which also holds the union of every group's offsets: each
// group's commit merges into it under its row lock, last (commit-batch.ts).
//
// Batch ids are striped: group g of N commits ids ≡ g (mod N), starting after the version's last batch
// when the group first ran. Ids stay unique per version without any coordination between groups, so
// batch_log, offset_log and the sink rows' `_batch_id` keep their keys, and every reader of them too.
import { FencedError, SupersededError } from "../errors";
import { loadCheckpoint, type StoredCheckpoint } from "./checkpoint-store";
import type { GroupLease, PartitionGroup } from "./partition-group";
import type { SqlClient } from "./sql-client";

/** SQL: group `g` of `of`'s first batch id after the version's `last` batch — the first id ≡ g (mod of) above it. */
const firstGroupBatchSql = (last: string, g: string, of: string) =>
  `(${last} + 1 + (((${g} - (${last} + 1)) % ${of}) + ${of}) % ${of})`;

/**
 * SQL for the id of a group's next batch (its last + N, or its first when it has not run yet);
 * `versionId` is a parameter placeholder. For the workers' claim, which counts attempts per batch id.
 */
export function nextGroupBatchIdSql(versionId: string, group: PartitionGroup): string {
  const { no, of } = group;
  return `coalesce((SELECT last_batch_id + ${of} FROM group_checkpoints WHERE pipeline_version_id = ${versionId} AND group_no = ${no}),
    (SELECT ${firstGroupBatchSql("last_batch_id", String(no), String(of))} FROM checkpoints WHERE pipeline_version_id = ${versionId}), ${no})`;
}

/** The id of a group's next batch (see nextGroupBatchIdSql). */
export async function nextGroupBatchId(
  db: SqlClient,
  pipelineVersionId: string,
  group: PartitionGroup,
): Promise<number> {
  const res = await db.query<{ next: string | bigint }>(
    `SELECT ${nextGroupBatchIdSql("$1", group)} AS next`,
    [pipelineVersionId],
  );
  return Number(res.rows[0]!.next);
}

/**
 * The group's lease epoch as stored now (like readLeaseEpoch for one runner); undefined when the lease
 * was taken under an older version epoch — a reset or schema change since fenced every group.
 */
export async function readGroupLeaseEpoch(
  db: SqlClient,
  pipelineVersionId: string,
  groupNo: number,
): Promise<number | undefined> {
  const res = await db.query<{ lease_epoch: string }>(
    `SELECT g.lease_epoch FROM group_checkpoints g
       JOIN checkpoints c ON c.pipeline_version_id = g.pipeline_version_id AND c.lease_epoch = g.version_epoch
      WHERE g.pipeline_version_id = $1 AND g.group_no = $2`,
    [pipelineVersionId, groupNo],
  );
  const r = res.rows[0];
  return r ? Number(r.lease_epoch) : undefined;
}

/**
 * Take the group's lease (creating its row on first use). A group whose row was written under an
 * older version epoch — a checkpoint reset or an approved schema change since — takes its offsets
 * again from the version's row, which holds every group's committed offsets (and a reset's). Its last
 * batch id stays: ids only need to be unique, and striping keeps them so.
 */
export async function acquireGroupLease(
  db: SqlClient,
  pipelineVersionId: string,
  group: PartitionGroup,
  owner: string,
): Promise<GroupLease> {
  // Every group's row at once, so each starts at the first id ≡ its number (mod of) after the
  // version's last batch, whichever group runs first; the row stores the id before it.
  await db.query(
    `INSERT INTO group_checkpoints (pipeline_version_id, group_no, last_batch_id)
     SELECT $1, g, ${firstGroupBatchSql("c.last_batch_id", "g", "$2::int")} - $2::int
       FROM checkpoints c, generate_series(0, $2::int - 1) AS g WHERE c.pipeline_version_id = $1
     ON CONFLICT DO NOTHING`,
    [pipelineVersionId, group.of],
  );
  const res = await db.query<{ lease_epoch: string; version_epoch: string }>(
    `UPDATE group_checkpoints g
        SET lease_epoch = g.lease_epoch + 1, lease_owner = $4, lease_at = now(), updated_at = now(),
            end_offsets = CASE WHEN g.version_epoch IS DISTINCT FROM c.lease_epoch
              THEN (SELECT coalesce(jsonb_object_agg(e.k, e.v), '{}'::jsonb) FROM jsonb_each(c.end_offsets) AS e(k, v) WHERE e.k::int % $3::int = $2::int)
              ELSE g.end_offsets END,
            version_epoch = c.lease_epoch
       FROM checkpoints c
      WHERE g.pipeline_version_id = $1 AND g.group_no = $2::int AND c.pipeline_version_id = $1
        AND NOT EXISTS (SELECT 1 FROM pipeline_versions v WHERE v.id = $1 AND v.superseded_by_id IS NOT NULL)
      RETURNING g.lease_epoch, g.version_epoch`,
    [pipelineVersionId, group.no, group.of, owner],
  );
  const row = res.rows[0];
  if (!row) {
    // No row updated: the version was superseded (say so, as acquireLease does), or has no checkpoint.
    const superseded = await db.query<{ id: string }>(
      `SELECT id FROM pipeline_versions WHERE id = $1 AND superseded_by_id IS NOT NULL`,
      [pipelineVersionId],
    );
    if (superseded.rows[0])
      throw new SupersededError(
        `pipeline version ${pipelineVersionId} was superseded by a newer version, which continues from its checkpoint; its partition groups cannot run again`,
      );
    throw new Error(`no checkpoint row for pipeline version ${pipelineVersionId}`);
  }
  return { group, epoch: Number(row.lease_epoch), versionEpoch: Number(row.version_epoch) };
}

/**
 * The checkpoint as one group sees it: the version's watermark, clocks and state, with the group's
 * own last batch, end offsets and lease epoch; and the version's offsets (every group's).
 */
export async function loadGroupCheckpoint(
  db: SqlClient,
  pipelineVersionId: string,
  group: PartitionGroup,
): Promise<StoredCheckpoint & { versionEndOffsets: Record<string, number> }> {
  const cp = await loadCheckpoint(db, pipelineVersionId);
  const res = await db.query<{
    last_batch_id: string;
    end_offsets: Record<string, number>;
    lease_epoch: string;
  }>(
    `SELECT last_batch_id, end_offsets, lease_epoch FROM group_checkpoints WHERE pipeline_version_id = $1 AND group_no = $2`,
    [pipelineVersionId, group.no],
  );
  const g = res.rows[0];
  if (!g) throw new Error(`no checkpoint row for group ${group.no} of pipeline version ${pipelineVersionId}`);
  return {
    ...cp,
    lastBatchId: Number(g.last_batch_id),
    endOffsets: g.end_offsets,
    leaseEpoch: Number(g.lease_epoch),
    versionEndOffsets: cp.endOffsets,
  };
}

/**
 * In a commit's transaction, first: lock the group's row and check the lease and that `batchId` is
 * the group's next. Two commits of one group are serialised here; other groups are not waited for.
 */
export async function lockGroupForCommit(
  db: SqlClient,
  pipelineVersionId: string,
  lease: GroupLease,
  batchId: number,
): Promise<void> {
  const res = await db.query<{ last_batch_id: string; lease_epoch: string }>(
    `SELECT last_batch_id, lease_epoch FROM group_checkpoints WHERE pipeline_version_id = $1 AND group_no = $2 FOR UPDATE`,
    [pipelineVersionId, lease.group.no],
  );
  const g = res.rows[0];
  if (!g || Number(g.lease_epoch) !== lease.epoch)
    throw new FencedError(
      `batch ${batchId} not committed: another runner took over group ${lease.group.no} of pipeline version ${pipelineVersionId}`,
    );
  if (Number(g.last_batch_id) !== batchId - lease.group.of)
    throw new FencedError(
      `batch ${batchId} not committed: group ${lease.group.no}'s last committed batch is ${g.last_batch_id}`,
    );
}

/** In the commit, last: the group's row moves to this batch and its partitions' offsets. */
export async function advanceGroupCheckpoint(
  db: SqlClient,
  pipelineVersionId: string,
  group: PartitionGroup,
  batchId: number,
  endOffsets: Record<string, number>,
): Promise<void> {
  await db.query(
    `UPDATE group_checkpoints SET last_batch_id = $3, end_offsets = end_offsets || $4::jsonb, updated_at = now()
      WHERE pipeline_version_id = $1 AND group_no = $2`,
    [pipelineVersionId, group.no, batchId, JSON.stringify(endOffsets)],
  );
}

/**
 * A group that has read nothing yet records where it starts (`startingOffsets: latest`), in its row
 * and in the version's (so a later re-read of the version's offsets keeps it). Like
 * recordStartingOffsets for one runner; returns the group's start, whoever recorded it.
 */
export async function recordGroupStartingOffsets(
  db: SqlClient,
  pipelineVersionId: string,
  lease: GroupLease,
  offsets: Record<string, number>,
): Promise<Record<string, number>> {
  const res = await db.query<{ end_offsets: Record<string, number>; lease_epoch: string }>(
    `WITH started AS (
       UPDATE group_checkpoints SET end_offsets = $4::jsonb, updated_at = now()
        WHERE pipeline_version_id = $1 AND group_no = $2 AND lease_epoch = $3 AND end_offsets = '{}'::jsonb
       RETURNING end_offsets, lease_epoch),
     version AS (
       UPDATE checkpoints SET end_offsets = $4::jsonb || end_offsets, updated_at = now()
        WHERE pipeline_version_id = $1 AND EXISTS (SELECT 1 FROM started))
     SELECT end_offsets, lease_epoch FROM started
     UNION ALL SELECT end_offsets, lease_epoch FROM group_checkpoints
      WHERE pipeline_version_id = $1 AND group_no = $2 AND NOT EXISTS (SELECT 1 FROM started)`,
    [pipelineVersionId, lease.group.no, lease.epoch, JSON.stringify(offsets)],
  );
  const r = res.rows[0];
  if (!r || Number(r.lease_epoch) !== lease.epoch)
    throw new FencedError(
      `pipeline version ${pipelineVersionId}: another runner took over group ${lease.group.no} before its starting offsets were recorded`,
    );
  return r.end_offsets;
}
