// Rows for a bulk write inside the batch transaction, as a SELECT the write reads from. Large sets are
// staged with COPY (pg-copy-streams) into a temporary table of the connection; small ones travel as one
// JSON parameter (bulk.ts). Measured (docs/performance.md, "The ledger's Postgres work"): 20k ledger
// rows with ON CONFLICT DO NOTHING took 0.60× the time through COPY + INSERT … SELECT, Postgres CPU
// 362 → 145 ms a batch — Postgres parses COPY's text far faster than jsonb_array_elements and casts.
// Below STAGE_FROM_ROWS the two extra round trips (create-if-missing, COPY) cost more than they save.
//
// One stage table per column shape (the list of SQL types), made once per connection, emptied at
// every commit (ON COMMIT DELETE ROWS) and before each use (a shape may be staged twice in one
// transaction: two outputs with the same columns). The sink writer role (sink-writer-role.ts) reads
// it: sink writes select from it as that role.
// A stage table does not read back in the order the rows were given: once emptied at a commit, its
// pages have room that Postgres fills with later rows (the free space map), and a scan reads pages in
// order. So a write must not depend on the order of the rows it selects (write-sink.ts decides which
// of a key's rows wins before staging them).
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { bulkSelect, postgresTimestampText, type BulkColumn } from "./bulk";
import { SINK_WRITER_ROLE } from "./sink-writer-role";

export const STAGE_FROM_ROWS = 1000;

/**
 * A `SELECT c0, c1, …` of the rows and its parameters, numbered from `firstParam` (none when staged).
 * `stageFromRows` overrides the size from which rows are staged (tests run both paths).
 */
export async function bulkRows(
  client: pg.PoolClient,
  columns: BulkColumn[],
  firstParam = 1,
  stageFromRows = STAGE_FROM_ROWS,
): Promise<{ sql: string; params: string[] }> {
  const rows = columns[0]?.values.length ?? 0;
  if (rows < stageFromRows) return bulkSelect(columns, firstParam);
  for (const c of columns)
    if (c.values.length !== rows)
      throw new Error(`bulk column ${c.name} has ${c.values.length} values, expected ${rows}`);
  const types = columns.map((c) => c.sqlType);
  // The shape's name: SQL types are the spec's (postgresTypeFor) or the engine's own, never user text,
  // and the hash keeps the identifier short and plain whatever they are.
  const table = `sluice_stage_${createHash("sha1").update(types.join(",")).digest("hex").slice(0, 16)}`;
  const defs = types.map((t, j) => `c${j} ${t}`).join(", ");
  await client.query(
    `DO $$ BEGIN
       IF to_regclass('pg_temp.${table}') IS NULL THEN
         CREATE TEMP TABLE ${table} (${defs}) ON COMMIT DELETE ROWS;
         GRANT SELECT ON pg_temp.${table} TO ${SINK_WRITER_ROLE};
       ELSE
         DELETE FROM pg_temp.${table};
       END IF;
     END $$`,
  );
  const names = columns.map((_, j) => `c${j}`).join(", ");
  await pipeline(
    Readable.from(copyText(columns, rows)),
    client.query(copyFrom(`COPY pg_temp.${table} (${names}) FROM STDIN`)),
  );
  return { sql: `SELECT ${names} FROM pg_temp.${table}`, params: [] };
}

/** COPY's text format, in chunks of rows: tab-separated, \N for null, backslash escapes. */
function* copyText(columns: BulkColumn[], rows: number): Generator<string> {
  const encoders = columns.map((c) => copyEncoderFor(c.sqlType));
  const CHUNK = 1000;
  for (let start = 0; start < rows; start += CHUNK) {
    let out = "";
    for (let i = start; i < Math.min(rows, start + CHUNK); i++) {
      for (let j = 0; j < columns.length; j++) {
        const v = columns[j]!.values[i];
        if (j > 0) out += "\t";
        out += v === null || v === undefined ? "\\N" : encoders[j]!(v);
      }
      out += "\n";
    }
    yield out;
  }
}

const ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };
const escapeCopy = (s: string) => s.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]!);

/** Years Date.toISOString writes as Postgres reads them (four digits, after year 0). */
const ISO_MIN_MS = Date.UTC(1, 0, 1);
const ISO_MAX_MS = Date.UTC(10000, 0, 1);

function copyEncoderFor(sqlType: string): (v: unknown) => string {
  switch (sqlType) {
    case "jsonb":
      return (v) => escapeCopy(JSON.stringify(v));
    case "timestamptz":
      return (v) => {
        const ms = v instanceof Date ? v.getTime() : typeof v === "number" ? v : Date.parse(String(v));
        if (Number.isNaN(ms)) throw new Error(`not a timestamp: ${String(v)}`);
        return ms >= ISO_MIN_MS && ms < ISO_MAX_MS ? new Date(ms).toISOString() : postgresTimestampText(ms);
      };
    case "bytea":
      // bytea's hex input (\x…), its backslash escaped for COPY.
      return (v) => `\\\\x${(Buffer.isBuffer(v) ? v : Buffer.from(String(v))).toString("hex")}`;
    default:
      return (v) => {
        if (typeof v === "number") return String(v); // NaN, Infinity and -Infinity as Postgres reads them
        if (typeof v === "bigint" || typeof v === "boolean") return String(v);
        if (v instanceof Date) return v.toISOString();
        return escapeCopy(typeof v === "object" ? JSON.stringify(v) : String(v));
      };
  }
}
