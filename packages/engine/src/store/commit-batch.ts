// Exactly-once into Postgres: a batch's sink rows, dedup state changes, dead letters, progress record
// and checkpoint advance are written in ONE transaction, fenced on the lease epoch and the expected
// previous batch id. A stale or duplicate runner's commit is rejected and rolls back entirely.
// A partition group's batch (group-checkpoint-store.ts) is fenced on its group's row first, and takes
// the version's row — shared with the other groups — only at the end: there its time is merged into
// the version's as it is by then, and its state size added, so groups commit side by side and wait
// for each other only for that last update. A group's batch with an operator (windows, CDC) or several
// outputs takes the version's row right after its own: that state is shared by every group and merged
// by the watermarks committed, so those commits run one at a time — reading and processing still side
// by side.
import type pg from "pg";
import type { DeadLetterRow, ProcessedBatch } from "../batch/process-batch";
import type { CommittedWatermark } from "../operator/result-operator";
import { assertBalanced, type OutcomeCounts } from "../batch/outcomes";
import { CrossGroupDuplicateError, CrossGroupLateError, FencedError, InvariantError } from "../errors";
import type { Checkpoint } from "./checkpoint-store";
import { endOffsetsOf, type OffsetRange } from "../source/source";
import { bulkSelect } from "./bulk";
import { advanceGroupCheckpoint, lockGroupForCommit } from "./group-checkpoint-store";
import type { GroupLease } from "./partition-group";
import { bulkRows } from "./stage-rows";
import type { SinkTable } from "./sink-table";
import { assertSinkClaims } from "./sink-claims";
import { writeSinkRows } from "./write-sink";
import type { BatchProgress } from "./progress-record";
import { markReplayed, type ReplayItem, type ReplayItemResult } from "./replay-store";

/** A dead-letter replay batch: the items it applies and each row's outcome as the batch decided it. */
export interface CommitReplay {
  items: ReplayItem[];
  /** Per item id, the outcome processBatch (and the operator) gave its row; "sink" may still meet a key the ledger holds. */
  verdicts: Map<number, { outcome: ReplayItemResult["outcome"]; detail: string | null }>;
  /** Items left out of the batch (they would stop it), marked applied with why. */
  refused: ReplayItemResult[];
}

/** Dead letters keep at most this much of the raw value (the rest is marked truncated). */
export const MAX_RAW_BYTES = 64 * 1024;

export interface CommitInput {
  pipelineVersionId: string;
  batchId: number;
  epoch: number;
  topic: string;
  /** Every table the version writes, as claimed (sink-claims.ts claimNames): checked before any write. */
  sinkClaims: readonly string[];
  /** The ledger's sink table; absent when an operator writes the result. */
  sink?: SinkTable;
  /**
   * A stateful operator (windows, CDC, webhook) writes its state and result instead, by the watermark
   * this commit stores; returns the change in state size.
   */
  operatorWrite?: (
    client: pg.PoolClient,
    committed: CommittedWatermark,
  ) => Promise<{ rows: number; bytes: number; stale?: number }>;
  /**
   * A pipeline with several outputs or a join (runner/staged-result.ts): the join's and every output's
   * writes, in order, instead of `sink` / `operatorWrite`; then what the checkpoint keeps of them.
   */
  staged?: StagedWrites;
  ranges: OffsetRange[];
  inputRows: number;
  processed: ProcessedBatch;
  watermark: Date | null;
  eventTimeMax: Checkpoint["eventTimeMax"];
  /** Dedup state with a time before this is evicted. */
  evictBefore: Date | null;
  /** Set for a dead-letter replay batch: the items are marked applied in this transaction. */
  replay?: CommitReplay;
  /** A partition group's batch: fenced on its group, its time merged into the version's at the end. */
  group?: GroupCommit;
  /**
   * Builds the progress record from the final outcome counts (sink conflicts are known only here) and
   * the watermark committed (a group's: merged with the other groups').
   */
  progress(
    outcomes: OutcomeCounts,
    state: { rows: number; bytes: number },
    watermark: Date | null,
  ): BatchProgress;
}

export interface GroupCommit {
  lease: GroupLease;
  /**
   * Rows this batch accepted that are late by the time stored now (another group's commit moved it
   * since the batch was processed): their window may be final, their dedup key evicted. Undefined: none.
   */
  lateBy(stored: StoredTime): LateRows | undefined;
  /**
   * This batch's time applied onto the version's as stored now: other groups may have moved it since
   * the batch was processed (`client`: the commit's, holding the version's row).
   */
  retime(stored: StoredTime, client: pg.PoolClient): Promise<CommittedTime>;
}

/** What a group's commit finds in the version's row, under its lock: the time every group committed. */
export type StoredTime = Pick<Checkpoint, "watermark" | "eventTimeMax" | "endOffsets" | "outputs">;

/** The earliest row a batch accepted, and the horizon (watermark minus lateness) it is now behind. */
export interface LateRows {
  earliest: Date;
  lateBefore: Date;
  /** The output whose watermark makes it late (several outputs). */
  output?: string;
}

export interface CommittedTime {
  watermark: Date | null;
  eventTimeMax: Checkpoint["eventTimeMax"];
  evictBefore: Date | null;
  /** Several outputs: each output's watermark this commit stores (undefined: as the batch prepared them). */
  outputs?: CommittedOutputs;
}

/** Each output's watermark a commit stores, by output name. */
export type CommittedOutputs = ReadonlyMap<string, Date | null>;

interface VersionRow {
  last_batch_id: string;
  lease_epoch: string;
  state_rows: string;
  state_bytes: string;
  watermark: Date | null;
  event_time_max: Checkpoint["eventTimeMax"];
  end_offsets: Record<string, number>;
  outputs: Checkpoint["outputs"];
  dimension: Checkpoint["dimension"];
}

export interface StagedWrites {
  /** `committed`: each output's watermark as the commit decided it (a partition group's); undefined: as prepared. */
  writes: ((
    client: pg.PoolClient,
    committed: CommittedOutputs | undefined,
  ) => Promise<{ rows: number; bytes: number }>)[];
  /**
   * Called after the writes: per output watermark and state size (checkpoints.outputs) and the join's
   * (checkpoints.dimension) — sizes added onto what is `stored` now.
   */
  checkpoint(
    stored: Pick<Checkpoint, "outputs" | "dimension">,
    committed: CommittedOutputs | undefined,
  ): { outputs: unknown; dimension: unknown };
}

export interface CommitResult {
  outcomes: OutcomeCounts;
  stateRows: number;
  stateBytes: number;
  progress: BatchProgress;
}

export async function commitBatch(pool: pg.Pool, input: CommitInput): Promise<CommitResult> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    // One runner: the version's row, first. A group: its own row now, the version's at the end (with
    // an operator: next), where the batch's time is applied onto what the other groups committed.
    let cp: VersionRow | undefined;
    let time: CommittedTime = input;
    const lockVersionForGroup = async (group: GroupCommit) => {
      cp = await lockVersion(client, input.pipelineVersionId);
      if (!cp || Number(cp.lease_epoch) !== group.lease.versionEpoch)
        throw new FencedError(
          `batch ${input.batchId} not committed: pipeline version ${input.pipelineVersionId} was reset, changed or superseded since group ${group.lease.group.no} took its lease`,
        );
      const stored: StoredTime = {
        watermark: cp.watermark,
        eventTimeMax: cp.event_time_max,
        endOffsets: cp.end_offsets,
        outputs: cp.outputs,
      };
      // Rows this batch accepted against the watermark it loaded may be late by the one another group
      // committed since: their window may be final, their dedup key evicted. Run again, judged by it.
      const late = group.lateBy(stored);
      if (late)
        throw new CrossGroupLateError(
          `batch ${input.batchId}: rows from ${late.earliest.toISOString()} are late by the watermark another partition group committed since it was processed (late before ${late.lateBefore.toISOString()}${late.output ? ` in output ${late.output}` : ""}); it runs again`,
        );
      time = await group.retime(stored, client);
    };
    if (input.group) {
      await lockGroupForCommit(client, input.pipelineVersionId, input.group.lease, input.batchId);
      // Windows, CDC and outputs merge into state every group shares, by the watermark the version
      // row holds: take it now. A ledger's group waits for it only at the end.
      if (input.operatorWrite || input.staged) await lockVersionForGroup(input.group);
    } else {
      cp = await lockVersion(client, input.pipelineVersionId);
      if (!cp || Number(cp.lease_epoch) !== input.epoch) {
        throw new FencedError(
          `batch ${input.batchId} not committed: another runner took over pipeline version ${input.pipelineVersionId}`,
        );
      }
      if (Number(cp.last_batch_id) !== input.batchId - 1) {
        throw new FencedError(
          `batch ${input.batchId} not committed: the last committed batch is ${cp.last_batch_id}`,
        );
      }
    }

    // The tables are still this pipeline's (a claim that changed hands since registration stops here).
    await assertSinkClaims(client, input.pipelineVersionId, input.sinkClaims);

    const outcomes = structuredClone(input.processed.outcomes);
    const writtenRows = input.replay ? new Set<string>() : undefined;
    let operatorState = { rows: 0, bytes: 0 };
    if (input.staged)
      for (const write of input.staged.writes) {
        const delta = await write(client, time.outputs);
        operatorState = { rows: operatorState.rows + delta.rows, bytes: operatorState.bytes + delta.bytes };
      }
    else if (input.operatorWrite) {
      const { stale, ...delta } = await input.operatorWrite(client, { watermark: time.watermark });
      operatorState = delta;
      // Changes found stale only now (partition groups' CDC, applied in the commit).
      if (stale) {
        outcomes.sink -= stale;
        outcomes.stale += stale;
      }
    } else {
      if (!input.sink)
        throw new InvariantError(
          `batch ${input.batchId}: neither a sink table nor an operator to write the result`,
        );
      const written = await writeSinkRows(client, input.sink, input.processed.sinkRows, input, writtenRows);
      // Rows whose key an append ledger already holds are duplicates, not sink rows.
      outcomes.duplicate += outcomes.sink - written;
      outcomes.sink = written;
    }
    assertBalanced(input.inputRows, outcomes);

    const added = await insertDedupState(
      client,
      input.pipelineVersionId,
      input.processed.dedupInserts,
      input.group !== undefined,
    );
    // A key this batch did not find in dedup state at processing, but that is there now: another group
    // committed it since (the same event on another partition). The batch runs again, seeing it.
    if (input.group && added.rows < input.processed.dedupInserts.length)
      throw new CrossGroupDuplicateError(
        `batch ${input.batchId}: ${input.processed.dedupInserts.length - added.rows} of its dedup keys were committed by another partition group meanwhile`,
      );
    if (input.group && !cp) await lockVersionForGroup(input.group);
    if (!cp) throw new InvariantError(`batch ${input.batchId}: the version's checkpoint was not locked`);
    const evicted = time.evictBefore
      ? await evictDedupState(client, input.pipelineVersionId, time.evictBefore)
      : { rows: 0, bytes: 0 };
    const deadLetterIds = await insertDeadLetters(client, input, input.processed.deadLetters);
    if (input.replay)
      await markReplayed(
        client,
        input.pipelineVersionId,
        input.batchId,
        replayResults(
          input.replay,
          deadLetterIds,
          input.processed.deadLetters,
          input.sink ? writtenRows : undefined,
        ),
      );

    const state = {
      rows: Number(cp.state_rows) + added.rows - evicted.rows + operatorState.rows,
      bytes: Number(cp.state_bytes) + added.bytes - evicted.bytes + operatorState.bytes,
    };
    const staged = input.staged?.checkpoint({ outputs: cp.outputs, dimension: cp.dimension }, time.outputs);
    const progress = input.progress(outcomes, state, time.watermark);
    await client.query(
      `INSERT INTO batch_log (pipeline_version_id, batch_id, input_rows, sink_rows, outcomes, progress) VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        input.pipelineVersionId,
        input.batchId,
        input.inputRows,
        outcomes.sink,
        JSON.stringify(outcomes),
        JSON.stringify(progress),
      ],
    );
    const endOffsets = endOffsetsOf(input.ranges);
    await client.query(
      `UPDATE checkpoints SET last_batch_id = greatest(last_batch_id, $2), end_offsets = end_offsets || $3::jsonb, watermark = $4, event_time_max = $5,
              state_rows = $6, state_bytes = $7, outputs = coalesce($8::jsonb, outputs), dimension = coalesce($9::jsonb, dimension),
              updated_at = now()
        WHERE pipeline_version_id = $1`,
      [
        input.pipelineVersionId,
        input.batchId,
        JSON.stringify(endOffsets),
        time.watermark,
        JSON.stringify(time.eventTimeMax),
        state.rows,
        state.bytes,
        staged ? JSON.stringify(staged.outputs) : null,
        staged ? JSON.stringify(staged.dimension) : null,
      ],
    );
    if (input.group)
      await advanceGroupCheckpoint(
        client,
        input.pipelineVersionId,
        input.group.lease.group,
        input.batchId,
        endOffsets,
      );
    await client.query("COMMIT");
    return { outcomes, stateRows: state.rows, stateBytes: state.bytes, progress };
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

async function lockVersion(
  client: pg.PoolClient,
  pipelineVersionId: string,
): Promise<VersionRow | undefined> {
  const res = await client.query<VersionRow>(
    `SELECT last_batch_id, lease_epoch, state_rows, state_bytes, watermark, event_time_max, end_offsets, outputs, dimension FROM checkpoints WHERE pipeline_version_id = $1 FOR UPDATE`,
    [pipelineVersionId],
  );
  return res.rows[0];
}

// State size counts the key's bytes plus 8 for its timestamp: the payload Sluice keeps, not disk pages.
async function insertDedupState(
  client: pg.PoolClient,
  pv: string,
  rows: { key: string; time: Date }[],
  /** Insert in key order: two groups inserting overlapping keys then wait on each other in one order, never in a cycle. */
  inKeyOrder: boolean,
): Promise<{ rows: number; bytes: number }> {
  if (rows.length === 0) return { rows: 0, bytes: 0 };
  const { sql, params } = await bulkRows(
    client,
    [
      { name: "key", sqlType: "text", values: rows.map((r) => r.key) },
      { name: "event_time", sqlType: "timestamptz", values: rows.map((r) => r.time) },
    ],
    2,
  );
  const res = await client.query<{ n: string; bytes: string }>(
    `WITH ins AS (INSERT INTO dedup_state (pipeline_version_id, key, event_time) SELECT $1, * FROM (${sql}) AS u${inKeyOrder ? " ORDER BY 2" : ""} ON CONFLICT DO NOTHING RETURNING key)
     SELECT count(*) AS n, coalesce(sum(octet_length(key) + 8), 0) AS bytes FROM ins`,
    [pv, ...params],
  );
  return { rows: Number(res.rows[0]!.n), bytes: Number(res.rows[0]!.bytes) };
}

async function evictDedupState(
  client: pg.PoolClient,
  pv: string,
  before: Date,
): Promise<{ rows: number; bytes: number }> {
  const res = await client.query<{ n: string; bytes: string }>(
    `WITH del AS (DELETE FROM dedup_state WHERE pipeline_version_id = $1 AND event_time < $2 RETURNING key)
     SELECT count(*) AS n, coalesce(sum(octet_length(key) + 8), 0) AS bytes FROM del`,
    [pv, before],
  );
  return { rows: Number(res.rows[0]!.n), bytes: Number(res.rows[0]!.bytes) };
}

// Postgres text cannot hold NUL. A reason can quote the raw input (V8's JSON.parse error shows a
// snippet of it) and a key is arbitrary bytes, so a binary payload would otherwise make the whole
// batch fail to commit — forever, since it re-runs over the same offsets. The raw bytes stay in `raw`.
const pgText = (s: string) => s.replaceAll("\u0000", "\\u0000");

/**
 * Each replayed row's outcome: failed again → the dead letter recording it (this version's row for
 * that offset: new, or the one it already had — the unique key keeps one, the item records the
 * repeat); reached an append ledger holding its key → duplicate; otherwise what the batch decided.
 */
function replayResults(
  replay: CommitReplay,
  deadLetterIds: Map<string, number>,
  deadLetters: DeadLetterRow[],
  written: Set<string> | undefined,
): ReplayItemResult[] {
  const failed = new Map(deadLetters.map((d) => [`${d.record.partition}:${d.record.offset}`, d]));
  return [
    ...replay.refused,
    ...replay.items.map((item): ReplayItemResult => {
      const at = `${item.record.partition}:${item.record.offset}`;
      const dl = failed.get(at);
      if (dl)
        return {
          itemId: item.itemId,
          outcome: dl.outcome,
          detail: dl.reason,
          againDeadLetterId: deadLetterIds.get(at) ?? null,
        };
      const verdict = replay.verdicts.get(item.itemId);
      if (!verdict) throw new InvariantError(`replayed dead letter ${item.deadLetterId} has no outcome`);
      if (verdict.outcome === "sink" && written && !written.has(at))
        return {
          itemId: item.itemId,
          outcome: "duplicate",
          detail: "the sink already holds its key",
          againDeadLetterId: null,
        };
      return {
        itemId: item.itemId,
        outcome: verdict.outcome,
        detail: verdict.detail,
        againDeadLetterId: null,
      };
    }),
  ];
}

/** Writes the batch's dead letters; returns the id of this version's dead letter at each "partition:offset" written (or already there). */
async function insertDeadLetters(
  client: pg.PoolClient,
  input: CommitInput,
  rows: DeadLetterRow[],
): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  if (rows.length === 0) return ids;
  const raw = rows.map((r) => r.record.value ?? Buffer.alloc(0));
  const { sql, params } = bulkSelect(
    [
      { name: "topic", sqlType: "text", values: rows.map((r) => r.topic ?? input.topic) },
      { name: "outcome", sqlType: "text", values: rows.map((r) => r.outcome) },
      { name: "reason", sqlType: "text", values: rows.map((r) => pgText(r.reason)) },
      { name: "partition", sqlType: "integer", values: rows.map((r) => r.record.partition) },
      { name: "offset", sqlType: "bigint", values: rows.map((r) => r.record.offset) },
      {
        name: "key",
        sqlType: "text",
        values: rows.map((r) => (r.record.key ? pgText(r.record.key.toString("utf8")) : null)),
      },
      { name: "raw", sqlType: "bytea", values: raw.map((b) => b.subarray(0, MAX_RAW_BYTES)) },
      { name: "truncated", sqlType: "boolean", values: raw.map((b) => b.length > MAX_RAW_BYTES) },
      { name: "payload", sqlType: "jsonb", values: rows.map((r) => r.payload) },
      { name: "ingest_time", sqlType: "timestamptz", values: rows.map((r) => new Date(r.record.timestamp)) },
    ],
    3,
  );
  await client.query(
    `INSERT INTO dead_letters (pipeline_version_id, batch_id, topic, outcome, reason, partition, "offset", key, raw, truncated, payload, ingest_time)
     SELECT $1, $2, * FROM (${sql}) AS u ON CONFLICT DO NOTHING`,
    [input.pipelineVersionId, input.batchId, ...params],
  );
  if (!input.replay) return ids;
  // A row failing again in the version that dead-lettered it meets its own row: the original stays, the item records the repeat.
  const found = await client.query<{ id: string; partition: number; offset: string }>(
    `SELECT id, partition, "offset" FROM dead_letters WHERE pipeline_version_id = $1 AND topic = $4 AND (partition, "offset") IN (SELECT p, o FROM unnest($2::int[], $3::bigint[]) AS x(p, o))`,
    [
      input.pipelineVersionId,
      rows.map((r) => r.record.partition),
      rows.map((r) => r.record.offset),
      input.topic,
    ],
  );
  for (const r of found.rows) ids.set(`${r.partition}:${r.offset}`, Number(r.id));
  return ids;
}
