// Exactly-once into Postgres: a batch's sink rows, dedup state changes, dead letters, progress record
// and checkpoint advance are written in ONE transaction, fenced on the lease epoch and the expected
// previous batch id. A stale or duplicate runner's commit is rejected and rolls back entirely.
import type pg from "pg";
import type { DeadLetterRow, ProcessedBatch } from "../batch/process-batch";
import { assertBalanced, type OutcomeCounts } from "../batch/outcomes";
import { FencedError, InvariantError } from "../errors";
import type { Checkpoint } from "./checkpoint-store";
import { endOffsetsOf, type OffsetRange } from "../source/source";
import { bulkSelect } from "./bulk";
import type { SinkTable } from "./sink-table";
import { writeSinkRows } from "./write-sink";

/** Dead letters keep at most this much of the raw value (the rest is marked truncated). */
export const MAX_RAW_BYTES = 64 * 1024;

export interface CommitInput {
  pipelineVersionId: string;
  batchId: number;
  epoch: number;
  topic: string;
  /** The ledger's sink table; absent when an operator writes the result. */
  sink?: SinkTable;
  /** A stateful operator (windows, CDC, webhook) writes its state and result instead; returns the change in state size. */
  operatorWrite?: (client: pg.PoolClient) => Promise<{ rows: number; bytes: number }>;
  ranges: OffsetRange[];
  inputRows: number;
  processed: ProcessedBatch;
  watermark: Date | null;
  eventTimeMax: Checkpoint["eventTimeMax"];
  /** Dedup state with a time before this is evicted. */
  evictBefore: Date | null;
  /** Builds the progress record from the final outcome counts (sink conflicts are known only here). */
  progress(outcomes: OutcomeCounts, state: { rows: number; bytes: number }): Record<string, unknown>;
}

export interface CommitResult {
  outcomes: OutcomeCounts;
  stateRows: number;
  stateBytes: number;
  progress: Record<string, unknown>;
}

export async function commitBatch(pool: pg.Pool, input: CommitInput): Promise<CommitResult> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const res = await client.query<{ last_batch_id: string; lease_epoch: string; state_rows: string; state_bytes: string }>(
      `SELECT last_batch_id, lease_epoch, state_rows, state_bytes FROM checkpoints WHERE pipeline_version_id = $1 FOR UPDATE`,
      [input.pipelineVersionId],
    );
    const cp = res.rows[0];
    if (!cp || Number(cp.lease_epoch) !== input.epoch) {
      throw new FencedError(`batch ${input.batchId} not committed: another runner took over pipeline version ${input.pipelineVersionId}`);
    }
    if (Number(cp.last_batch_id) !== input.batchId - 1) {
      throw new FencedError(`batch ${input.batchId} not committed: the last committed batch is ${cp.last_batch_id}`);
    }

    const outcomes = structuredClone(input.processed.outcomes);
    let operatorState = { rows: 0, bytes: 0 };
    if (input.operatorWrite) operatorState = await input.operatorWrite(client);
    else {
      if (!input.sink) throw new InvariantError(`batch ${input.batchId}: neither a sink table nor an operator to write the result`);
      const written = await writeSinkRows(client, input.sink, input.processed.sinkRows, input);
      // Rows whose key an append ledger already holds are duplicates, not sink rows.
      outcomes.duplicate += outcomes.sink - written;
      outcomes.sink = written;
    }
    assertBalanced(input.inputRows, outcomes);

    const added = await insertDedupState(client, input.pipelineVersionId, input.processed.dedupInserts);
    const evicted = input.evictBefore ? await evictDedupState(client, input.pipelineVersionId, input.evictBefore) : { rows: 0, bytes: 0 };
    await insertDeadLetters(client, input, input.processed.deadLetters);

    const state = {
      rows: Number(cp.state_rows) + added.rows - evicted.rows + operatorState.rows,
      bytes: Number(cp.state_bytes) + added.bytes - evicted.bytes + operatorState.bytes,
    };
    const progress = input.progress(outcomes, state);
    await client.query(
      `INSERT INTO batch_log (pipeline_version_id, batch_id, input_rows, sink_rows, outcomes, progress) VALUES ($1, $2, $3, $4, $5, $6)`,
      [input.pipelineVersionId, input.batchId, input.inputRows, outcomes.sink, JSON.stringify(outcomes), JSON.stringify(progress)],
    );
    const endOffsets = endOffsetsOf(input.ranges);
    await client.query(
      `UPDATE checkpoints SET last_batch_id = $2, end_offsets = end_offsets || $3::jsonb, watermark = $4, event_time_max = $5,
              state_rows = $6, state_bytes = $7, updated_at = now()
        WHERE pipeline_version_id = $1`,
      [input.pipelineVersionId, input.batchId, JSON.stringify(endOffsets), input.watermark, JSON.stringify(input.eventTimeMax), state.rows, state.bytes],
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

// State size counts the key's bytes plus 8 for its timestamp: the payload Sluice keeps, not disk pages.
async function insertDedupState(client: pg.PoolClient, pv: string, rows: { key: string; time: Date }[]): Promise<{ rows: number; bytes: number }> {
  if (rows.length === 0) return { rows: 0, bytes: 0 };
  const { sql, params } = bulkSelect(
    [
      { name: "key", sqlType: "text", values: rows.map((r) => r.key) },
      { name: "event_time", sqlType: "timestamptz", values: rows.map((r) => r.time) },
    ],
    2,
  );
  const res = await client.query<{ n: string; bytes: string }>(
    `WITH ins AS (INSERT INTO dedup_state (pipeline_version_id, key, event_time) SELECT $1, * FROM (${sql}) AS u ON CONFLICT DO NOTHING RETURNING key)
     SELECT count(*) AS n, coalesce(sum(octet_length(key) + 8), 0) AS bytes FROM ins`,
    [pv, ...params],
  );
  return { rows: Number(res.rows[0]!.n), bytes: Number(res.rows[0]!.bytes) };
}

async function evictDedupState(client: pg.PoolClient, pv: string, before: Date): Promise<{ rows: number; bytes: number }> {
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

async function insertDeadLetters(client: pg.PoolClient, input: CommitInput, rows: DeadLetterRow[]): Promise<void> {
  if (rows.length === 0) return;
  const raw = rows.map((r) => r.record.value ?? Buffer.alloc(0));
  const { sql, params } = bulkSelect(
    [
      { name: "outcome", sqlType: "text", values: rows.map((r) => r.outcome) },
      { name: "reason", sqlType: "text", values: rows.map((r) => pgText(r.reason)) },
      { name: "partition", sqlType: "integer", values: rows.map((r) => r.record.partition) },
      { name: "offset", sqlType: "bigint", values: rows.map((r) => r.record.offset) },
      { name: "key", sqlType: "text", values: rows.map((r) => (r.record.key ? pgText(r.record.key.toString("utf8")) : null)) },
      { name: "raw", sqlType: "bytea", values: raw.map((b) => b.subarray(0, MAX_RAW_BYTES)) },
      { name: "truncated", sqlType: "boolean", values: raw.map((b) => b.length > MAX_RAW_BYTES) },
      { name: "payload", sqlType: "jsonb", values: rows.map((r) => r.payload) },
      { name: "ingest_time", sqlType: "timestamptz", values: rows.map((r) => new Date(r.record.timestamp)) },
    ],
    4,
  );
  await client.query(
    `INSERT INTO dead_letters (pipeline_version_id, batch_id, topic, outcome, reason, partition, "offset", key, raw, truncated, payload, ingest_time)
     SELECT $1, $2, $3, * FROM (${sql}) AS u ON CONFLICT DO NOTHING`,
    [input.pipelineVersionId, input.batchId, input.topic, ...params],
  );
}
