// The contract at the boundary: declared fields and types, required vs optional, unknown fields.
// A row that passes gets contract-typed values (decimal kept as exact text, timestamp as Date);
// one that does not is quarantined or rejected with a reason naming the field, the value and why.
import type { TColumn, TPipelineSpec } from "@sluice/spec";

export type ContractResult =
  | { kind: "row"; row: Record<string, unknown>; rescued: Record<string, unknown> | null }
  | { kind: "quarantine"; reason: string }
  | { kind: "reject"; reason: string };

type Coerce = (v: unknown) => { ok: true; value: unknown } | { ok: false };
const ok = (value: unknown) => ({ ok: true as const, value });
const bad = { ok: false as const };

const DECIMAL = /^-?\d+(\.\d+)?$/;
const INTEGER = /^-?\d+$/;

const COERCE: Record<TColumn["type"], Coerce> = {
  string: (v) => (typeof v === "string" ? ok(v) : bad),
  int: (v) => {
    if (typeof v === "number" && Number.isSafeInteger(v)) return ok(v);
    if (typeof v === "string" && INTEGER.test(v)) return ok(v);
    return bad;
  },
  // Kept as text so no precision is lost between the producer and a numeric column.
  decimal: (v) => {
    if (typeof v === "number" && Number.isFinite(v)) return ok(String(v));
    if (typeof v === "string" && DECIMAL.test(v)) return ok(v);
    return bad;
  },
  double: (v) => (typeof v === "number" && Number.isFinite(v) ? ok(v) : bad),
  boolean: (v) => (typeof v === "boolean" ? ok(v) : bad),
  timestamp: (v) => {
    if (typeof v !== "string" && typeof v !== "number") return bad;
    const d = new Date(v);
    return Number.isNaN(d.getTime()) ? bad : ok(d);
  },
  json: (v) => ok(v),
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
  const { onUnknownField, onTypeMismatch } = spec.contract;
  const mismatch = (reason: string): ContractResult => (onTypeMismatch === "reject" ? { kind: "reject", reason } : { kind: "quarantine", reason });

  return {
    check(value) {
      const row: Record<string, unknown> = {};
      for (const col of columns) {
        const raw = value[col.name];
        if (raw === undefined || raw === null) {
          if (!col.optional) return mismatch(`required field "${col.name}" is missing`);
          row[col.name] = null;
          continue;
        }
        const coerced = COERCE[col.type](raw);
        if (!coerced.ok) return mismatch(`field "${col.name}" should be ${col.type}, got ${show(raw)}`);
        row[col.name] = coerced.value;
      }
      let rescued: Record<string, unknown> | null = null;
      for (const key of Object.keys(value)) {
        if (declared.has(key)) continue;
        if (onUnknownField === "quarantine") return { kind: "quarantine", reason: `unknown field "${key}" (contract has no such field)` };
        if (onUnknownField === "reject") return { kind: "reject", reason: `unknown field "${key}" (contract has no such field)` };
        (rescued ??= {})[key] = value[key];
      }
      return { kind: "row", row, rescued };
    },
  };
}
