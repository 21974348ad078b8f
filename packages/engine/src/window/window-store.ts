// Window state in Postgres (window_state), keyed by pipeline version, output ("" for a pipeline with
// one sink), group key and window start.
// Reads happen before the commit; writes and eviction inside the batch transaction.
import type pg from "pg";
import { bulkSelect } from "../store/bulk";
import { bulkRows } from "../store/stage-rows";
import type { StateDelta } from "../operator/result-operator";
import type { Accumulators } from "./accumulators";

export interface WindowRow {
  groupKey: string;
  groupValues: unknown[];
  windowStart: Date;
  windowEnd: Date;
  accumulators: Accumulators;
}

export interface StoredWindow extends WindowRow {
  bytes: number;
}

export const windowId = (groupKey: string, start: Date) => `${start.getTime()}\u0000${groupKey}`;

/** What a window costs in state: its key, its group values and its accumulators, as stored. */
export function windowBytes(w: WindowRow): number {
  return (
    Buffer.byteLength(w.groupKey) +
    Buffer.byteLength(JSON.stringify(w.groupValues)) +
    Buffer.byteLength(JSON.stringify(w.accumulators)) +
    16
  );
}

type Row = {
  group_key: string;
  group_values: unknown[];
  window_start: Date;
  window_end: Date;
  accumulators: Accumulators;
  bytes: number;
};
const fromRow = (r: Row): StoredWindow => ({
  groupKey: r.group_key,
  groupValues: r.group_values,
  windowStart: r.window_start,
  windowEnd: r.window_end,
  accumulators: r.accumulators,
  bytes: r.bytes,
});
const COLUMNS = `group_key, group_values, window_start, window_end, accumulators, bytes`;

export async function loadWindows(
  db: pg.Pool | pg.PoolClient,
  pv: string,
  output: string,
  keys: { groupKey: string; windowStart: Date }[],
): Promise<Map<string, StoredWindow>> {
  if (keys.length === 0) return new Map();
  const { sql, params } = bulkSelect(
    [
      { name: "group_key", sqlType: "text", values: keys.map((k) => k.groupKey) },
      { name: "window_start", sqlType: "timestamptz", values: keys.map((k) => k.windowStart) },
    ],
    3,
  );
  const res = await db.query<Row>(
    `SELECT ${COLUMNS} FROM window_state s JOIN (${sql}) AS k (group_key, window_start) USING (group_key, window_start) WHERE s.pipeline_version_id = $1 AND s.output = $2`,
    [pv, output, ...params],
  );
  return new Map(res.rows.map((r) => [windowId(r.group_key, r.window_start), fromRow(r)]));
}

/** Windows whose end is at or before `before` (final), or every window (complete mode). */
export async function loadWindowsEndingBy(
  db: pg.Pool,
  pv: string,
  output: string,
  before: Date | null,
): Promise<StoredWindow[]> {
  const res = await db.query<Row>(
    `SELECT ${COLUMNS} FROM window_state WHERE pipeline_version_id = $1 AND output = $2${before ? " AND window_end <= $3" : ""} ORDER BY window_start, group_key`,
    before ? [pv, output, before] : [pv, output],
  );
  return res.rows.map(fromRow);
}

export async function upsertWindows(
  client: pg.PoolClient,
  pv: string,
  output: string,
  batchId: number,
  windows: StoredWindow[],
): Promise<void> {
  if (windows.length === 0) return;
  const { sql, params } = await bulkRows(
    client,
    [
      { name: "group_key", sqlType: "text", values: windows.map((w) => w.groupKey) },
      { name: "window_start", sqlType: "timestamptz", values: windows.map((w) => w.windowStart) },
      { name: "window_end", sqlType: "timestamptz", values: windows.map((w) => w.windowEnd) },
      { name: "group_values", sqlType: "jsonb", values: windows.map((w) => w.groupValues) },
      { name: "accumulators", sqlType: "jsonb", values: windows.map((w) => w.accumulators) },
      { name: "bytes", sqlType: "integer", values: windows.map((w) => w.bytes) },
    ],
    4,
  );
  await client.query(
    `INSERT INTO window_state (pipeline_version_id, output, updated_batch_id, group_key, window_start, window_end, group_values, accumulators, bytes)
     SELECT $1, $2, $3, * FROM (${sql}) AS u
     ON CONFLICT (pipeline_version_id, output, group_key, window_start) DO UPDATE
       SET accumulators = EXCLUDED.accumulators, bytes = EXCLUDED.bytes, updated_batch_id = EXCLUDED.updated_batch_id`,
    [pv, output, batchId, ...params],
  );
}

/** Evicts final windows and returns them, for append mode to write (partition groups: window-operator.ts). */
export async function takeFinalWindows(
  client: pg.PoolClient,
  pv: string,
  output: string,
  before: Date,
): Promise<StoredWindow[]> {
  const res = await client.query<Row>(
    `DELETE FROM window_state WHERE pipeline_version_id = $1 AND output = $2 AND window_end <= $3 RETURNING ${COLUMNS}`,
    [pv, output, before],
  );
  return res.rows
    .map(fromRow)
    .sort((a, b) => a.windowStart.getTime() - b.windowStart.getTime() || (a.groupKey < b.groupKey ? -1 : 1));
}

/** Evicts final windows: their end is at or before `before` (watermark − allowedLateness). */
export async function evictWindows(
  client: pg.PoolClient,
  pv: string,
  output: string,
  before: Date,
): Promise<StateDelta> {
  const res = await client.query<{ n: string; bytes: string }>(
    `WITH del AS (DELETE FROM window_state WHERE pipeline_version_id = $1 AND output = $2 AND window_end <= $3 RETURNING bytes)
     SELECT count(*) AS n, coalesce(sum(bytes), 0) AS bytes FROM del`,
    [pv, output, before],
  );
  return { rows: Number(res.rows[0]!.n), bytes: Number(res.rows[0]!.bytes) };
}
