// Dead-letter replay batches (docs/engine.md, "Replaying dead letters"). A person asks for dead letters
// to be replayed (@sluice/services requestDeadLetterReplay: dead_letter_replay_items, status pending);
// the runner of the version they target applies them in a batch of its own — the next batch id, no
// Kafka range, the checkpoint's offsets and watermark unchanged — planned in offset_log like any
// batch (so a crash re-runs exactly those items) and committed in the one fenced transaction, which
// also marks each item applied, conditionally: an item is applied at most once.
import type pg from "pg";
import type { SourceRecord } from "../source/source";
import { InvariantError } from "../errors";
import type { OutcomeColumn } from "../batch/outcomes";
import { bulkSelect } from "./bulk";
import { DIMENSION_MISSING } from "../join/decide-join";

/** At most this many dead letters per replay batch (and never more than the spec's batch size). */
export const MAX_REPLAY_ROWS = 10_000;

/** What a replay batch's plan records: the items it applies (and the requests they belong to). */
export interface ReplayPlan {
  replayIds: number[];
  itemIds: number[];
}

export interface ReplayItem {
  itemId: number;
  replayId: number;
  deadLetterId: number;
  /** The dead letter's source record, rebuilt from its raw bytes (original partition, offset, key, timestamp). */
  record: SourceRecord;
  /**
   * A join's `dimension_missing` dead letter: the row passed the late check and dedup when it was
   * read (the join refused it afterwards), so the replay does not check them again.
   */
  admitted: boolean;
}

/** The outcome an item's row reached in its replay batch, written in the batch's transaction. */
export interface ReplayItemResult {
  itemId: number;
  /** "refused": left out of the batch (it violates a `fail` expectation, which would stop the pipeline). */
  outcome: Exclude<OutcomeColumn, "stale"> | "refused";
  detail: string | null;
  /** Failed again: the dead letter that records it (a new one, or the same row if the version already had it). */
  againDeadLetterId: number | null;
}

/** The oldest pending items for this version (ids only: the plan records them). */
export async function pendingReplayItems(
  db: pg.Pool,
  pipelineVersionId: string,
  limit: number,
): Promise<ReplayPlan | undefined> {
  const res = await db.query<{ id: string; replay_id: string }>(
    `SELECT id, replay_id FROM dead_letter_replay_items WHERE pipeline_version_id = $1 AND status = 'pending' ORDER BY id LIMIT $2`,
    [pipelineVersionId, limit],
  );
  if (res.rows.length === 0) return undefined;
  return {
    replayIds: [...new Set(res.rows.map((r) => Number(r.replay_id)))],
    itemIds: res.rows.map((r) => Number(r.id)),
  };
}

/** The items of a plan that are still pending, with their rebuilt records (in dead-letter order). */
export async function loadReplayItems(
  db: pg.Pool,
  pipelineVersionId: string,
  plan: ReplayPlan,
): Promise<ReplayItem[]> {
  const res = await db.query<{
    id: string;
    replay_id: string;
    dead_letter_id: string;
    partition: number;
    offset: string;
    key: string | null;
    raw: Buffer;
    ingest_time: Date | null;
    created_at: Date;
    reason: string;
  }>(
    `SELECT i.id, i.replay_id, i.dead_letter_id, d.partition, d."offset", d.key, d.raw, d.ingest_time, d.created_at, d.reason
       FROM dead_letter_replay_items i JOIN dead_letters d ON d.id = i.dead_letter_id
      WHERE i.id = ANY($2::bigint[]) AND i.pipeline_version_id = $1 AND i.status = 'pending'
      ORDER BY d.partition, d."offset", i.id`,
    [pipelineVersionId, plan.itemIds],
  );
  return res.rows.map((r) => ({
    itemId: Number(r.id),
    replayId: Number(r.replay_id),
    deadLetterId: Number(r.dead_letter_id),
    record: {
      partition: r.partition,
      offset: Number(r.offset),
      key: r.key === null ? null : Buffer.from(r.key, "utf8"),
      value: r.raw,
      timestamp: (r.ingest_time ?? r.created_at).getTime(),
    },
    admitted: r.reason.startsWith(`${DIMENSION_MISSING}:`),
  }));
}

/**
 * Inside the batch transaction: mark each item applied with its outcome — only items still pending
 * for this version. Fewer rows than items means an item was applied by another batch: that batch's
 * rows already reached the sink, so this one must not commit (InvariantError rolls it back).
 */
export async function markReplayed(
  client: pg.PoolClient,
  pipelineVersionId: string,
  batchId: number,
  results: ReplayItemResult[],
): Promise<void> {
  if (results.length === 0) return;
  const { sql, params } = bulkSelect(
    [
      { name: "item_id", sqlType: "bigint", values: results.map((r) => r.itemId) },
      { name: "outcome", sqlType: "text", values: results.map((r) => r.outcome) },
      { name: "detail", sqlType: "text", values: results.map((r) => r.detail) },
      { name: "again", sqlType: "bigint", values: results.map((r) => r.againDeadLetterId) },
    ],
    3,
  );
  const res = await client.query(
    `UPDATE dead_letter_replay_items i SET status = 'applied', batch_id = $2, outcome = u.c1, detail = u.c2, again_dead_letter_id = u.c3, applied_at = now()
       FROM (${sql}) AS u WHERE i.id = u.c0 AND i.pipeline_version_id = $1 AND i.status = 'pending'`,
    [pipelineVersionId, batchId, ...params],
  );
  if (res.rowCount !== results.length) {
    throw new InvariantError(
      `replay batch ${batchId}: ${results.length - (res.rowCount ?? 0)} of ${results.length} replayed dead letter(s) were no longer pending; nothing was committed`,
    );
  }
}
