// The contract at the boundary: declared fields and types, required vs optional, unknown fields.
// A row that passes gets contract-typed values (decimal kept as exact text, timestamp as Date);
// one that does not is quarantined or rejected with a reason naming the field, the value and why.
import type { TColumn, TPipelineSpec } from "@sluice/pipeline-spec";

export type ContractResult =
  | { kind: "row"; row: Record<string, unknown>; rescued: Record<string, unknown> | null }
  | { kind: "quarantine"; reason: string; mismatch?: Mismatch }
  | { kind: "reject"; reason: string };

/** Which declared field had a value of another type (schema drift: the request proposing a widening reads it). */
export interface Mismatch {
  field: string;
  /** The declared type; absent for an unknown field quarantined by onUnknownField: quarantine. */
  declared?: TColumn["type"];
  raw: unknown;
}

/** Returns the contract-typed value, or BAD. (No result object per field: this runs for every field of every row.) */
type Coerce = (v: unknown) => unknown;
const BAD = Symbol("bad");

const DECIMAL = /^-?\d+(\.\d+)?$/;
const INTEGER = /^-?\d+$/;
/** Postgres' earliest timestamptz, 4714-11-24 00:00 BC UTC (the latest is beyond JavaScript's). */
const PG_MIN_TIMESTAMP_MS = -210_866_803_200_000;

const COERCE: Record<TColumn["type"], Coerce> = {
  string: (v) => (typeof v === "string" ? v : BAD),
  int: (v) => {
    if (typeof v === "number" && Number.isSafeInteger(v)) return v;
    if (typeof v === "string" && INTEGER.test(v)) return v;
    return BAD;
  },
  // Kept as text so no precision is lost between the producer and a numeric column.
  decimal: (v) => {
    if (typeof v === "number" && Number.isFinite(v)) return String(v);
    if (typeof v === "string" && DECIMAL.test(v)) return v;
    return BAD;
  },
  double: (v) => (typeof v === "number" && Number.isFinite(v) ? v : BAD),
  boolean: (v) => (typeof v === "boolean" ? v : BAD),
  timestamp: (v) => {
    if (typeof v !== "string" && typeof v !== "number") return BAD;
    const d = new Date(v);
    // Dates JavaScript accepts but Postgres cannot store would make the batch fail to commit forever.
    return Number.isNaN(d.getTime()) || d.getTime() < PG_MIN_TIMESTAMP_MS ? BAD : d;
  },
  json: (v) => v,
};

const show = (v: unknown) => {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 80 ? `${s.slice(0, 77)}...` : s;
};

export interface ContractChecker {
  check(value: Record<string, unknown>): ContractResult;
}

export function contractChecker(spec: Pick<TPipelineSpec, "contract">, columns: TColumn[]): ContractChecker {
  const declared = new Set(columns.map((c) => c.name));
  const coercers = columns.map((c) => COERCE[c.type]);
  const { onUnknownField, onTypeMismatch } = spec.contract;
  const mismatch = (reason: string, m?: Mismatch): ContractResult =>
    onTypeMismatch === "reject"
      ? { kind: "reject", reason }
      : { kind: "quarantine", reason, ...(m ? { mismatch: m } : {}) };

  return {
    check(value) {
      const row: Record<string, unknown> = {};
      for (let i = 0; i < columns.length; i++) {
        const col = columns[i]!;
        const raw = value[col.name];
        if (raw === undefined || raw === null) {
          if (!col.optional) return mismatch(`required field "${col.name}" is missing`);
          row[col.name] = null;
          continue;
        }
        const coerced = coercers[i]!(raw);
        if (coerced === BAD)
          return mismatch(`field "${col.name}" should be ${col.type}, got ${show(raw)}`, {
            field: col.name,
            declared: col.type,
            raw,
          });
        row[col.name] = coerced;
      }
      let rescued: Record<string, unknown> | null = null;
      for (const key in value) {
        if (declared.has(key) || !Object.hasOwn(value, key)) continue;
        if (onUnknownField === "quarantine")
          return {
            kind: "quarantine",
            reason: `unknown field "${key}" (contract has no such field)`,
            mismatch: { field: key, raw: value[key] },
          };
        if (onUnknownField === "reject")
          return { kind: "reject", reason: `unknown field "${key}" (contract has no such field)` };
        (rescued ??= {})[key] = value[key];
      }
      return { kind: "row", row, rescued };
    },
  };
}
