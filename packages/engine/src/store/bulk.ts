// Bulk writes: one INSERT ... SELECT FROM jsonb_array_elements($1::jsonb) per table per batch. The
// rows travel as ONE JSON array of row arrays — one round trip and one parameter however many rows,
// no per-row statements.
//
// Performance (docs/performance.md): V8's native JSON.stringify builds this text several times faster
// than Postgres array literals built in JavaScript (one string per column, every element quoted and
// escaped by hand), and Postgres' C JSON parser reads it faster than unnest() reads array literals.
// Timestamps go as epoch milliseconds, not ISO text: Date.toISOString per value was the next largest
// cost. Both measured on 20k-row ledger batches; see the bulk round-trip tests for exactness.

export interface BulkColumn {
  name: string;
  sqlType: string;
  values: readonly unknown[];
}

/** Epoch milliseconds whose conversion through float8 seconds is exact to the microsecond (years ~1685–2255). */
const EXACT_EPOCH_MS = 2 ** 53 / 1000;

/** `SELECT <typed columns> FROM jsonb_array_elements($n::jsonb)` and its one parameter. */
export function bulkSelect(columns: BulkColumn[], param = 1): { sql: string; params: [string] } {
  const rows = columns.length === 0 ? 0 : columns[0]!.values.length;
  for (const c of columns)
    if (c.values.length !== rows)
      throw new Error(`bulk column ${c.name} has ${c.values.length} values, expected ${rows}`);
  const encoders = columns.map((c) => encoderFor(c.sqlType));
  const out: unknown[][] = new Array(rows);
  for (let i = 0; i < rows; i++) {
    const row = new Array(columns.length);
    for (let j = 0; j < columns.length; j++) {
      const v = columns[j]!.values[i];
      row[j] = v === null || v === undefined ? null : encoders[j]!(v);
    }
    out[i] = row;
  }
  const exprs = columns.map((c, j) => `${columnExpr(c.sqlType, j)} AS c${j}`);
  return {
    sql: `SELECT ${exprs.join(", ")} FROM jsonb_array_elements($${param}::jsonb) AS r`,
    params: [JSON.stringify(out)],
  };
}

type Encode = (v: unknown) => unknown;

function encoderFor(sqlType: string): Encode {
  switch (sqlType) {
    case "jsonb":
      return (v) => v;
    case "timestamptz":
      return (v) => {
        const ms = v instanceof Date ? v.getTime() : typeof v === "number" ? v : Date.parse(String(v));
        if (Number.isNaN(ms)) throw new Error(`not a timestamp: ${String(v)}`);
        // Far from 1970 float8 seconds lose microseconds: send those as text instead.
        return Math.abs(ms) < EXACT_EPOCH_MS ? ms : postgresTimestampText(ms);
      };
    case "bytea":
      return (v) => (Buffer.isBuffer(v) ? v.toString("hex") : Buffer.from(String(v)).toString("hex"));
    default:
      return encodeScalar;
  }
}

/** Text for what JSON has no literal for: bigints, and NaN / ±Infinity (JSON.stringify would make them null). */
function encodeScalar(v: unknown): unknown {
  if (typeof v === "number") return Number.isFinite(v) ? v : String(v);
  if (typeof v === "bigint") return String(v);
  if (v instanceof Date) return v.toISOString();
  return typeof v === "object" ? JSON.stringify(v) : v;
}

/** `2025-01-02 03:04:05.678+00`, with ` BC` for years before 1 (ISO's year 0 is 1 BC; Postgres reads neither `+200000-…` nor `-000001-…`). */
export function postgresTimestampText(ms: number): string {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  const two = (n: number) => String(n).padStart(2, "0");
  const date = `${String(year > 0 ? year : 1 - year).padStart(4, "0")}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}`;
  const time = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}.${String(d.getUTCMilliseconds()).padStart(3, "0")}`;
  return `${date} ${time}+00${year > 0 ? "" : " BC"}`;
}

/** Reads element j of row `r` as the column's type. JSON null is SQL NULL. */
function columnExpr(sqlType: string, j: number): string {
  switch (sqlType) {
    case "jsonb":
      return `NULLIF(r->${j}, 'null'::jsonb)`;
    case "text":
      return `r->>${j}`;
    case "timestamptz":
      return `CASE jsonb_typeof(r->${j}) WHEN 'number' THEN to_timestamp((r->>${j})::float8 / 1000) ELSE (r->>${j})::timestamptz END`;
    case "bytea":
      return `decode(r->>${j}, 'hex')`;
    default:
      return `(r->>${j})::${sqlType}`;
  }
}
