// Measures as mergeable accumulators, kept in window state between batches: count, sum (exact for
// decimals), min, max, avg (sum and count) and count_distinct (the set of distinct values, bounded
// because the window is evicted once final). A conditional measure only folds rows whose condition holds.
import type { TCelRow, TCompiledMeasure, TContract, TFieldType } from "@sluice/pipeline-spec";
import {
  addDecimal,
  canonicalDecimal,
  compareDecimal,
  divideDecimal,
  formatDecimal,
  parseDecimal,
  type Decimal,
} from "./decimal";

/** JSON-serializable, stored in window_state.accumulators under the measure's name. */
export type Accumulator =
  | { n: number }
  | { s: string | number }
  | { v: string | number | null }
  | { s: string | number; n: number }
  | { d: string[] };

/** avg of a decimal is rounded to this many fraction digits (half away from zero). */
export const AVG_DECIMAL_SCALE = 6;

interface Ops {
  empty(): Accumulator;
  /** Folds one row's value (already known to be present, and the condition true) into `acc`, in place. */
  add(acc: Accumulator, value: unknown): void;
  merge(a: Accumulator, b: Accumulator): Accumulator;
  result(acc: Accumulator): unknown;
}

type Numeric = "int" | "decimal" | "double";
type Num = Decimal | bigint | number;
const zero = (t: Numeric) => (t === "double" ? 0 : "0");
const parseNum = (t: Numeric, v: unknown): Num =>
  t === "double" ? Number(v) : t === "int" ? BigInt(v as string | number) : parseDecimal(v);
const addNum = (t: Numeric, a: Num, b: Num): Num =>
  t === "double"
    ? (a as number) + (b as number)
    : t === "int"
      ? (a as bigint) + (b as bigint)
      : addDecimal(a as Decimal, b as Decimal);
const numText = (t: Numeric, n: Num): string | number =>
  t === "double" ? (n as number) : t === "int" ? (n as bigint).toString() : formatDecimal(n as Decimal);

// While a batch folds rows, sums are kept as numbers beside their accumulator (no text per row);
// merge() and result() read them and produce plain JSON again.
const liveSums = new WeakMap<object, Num>();
const sumOf = (t: Numeric, a: { s: string | number }): Num => liveSums.get(a) ?? parseNum(t, a.s);
function addToSum(t: Numeric, a: { s: string | number }, v: unknown): void {
  liveSums.set(a, addNum(t, sumOf(t, a), parseNum(t, v)));
}

/** Ordered representation for min/max, and back. */
function ordered(type: TFieldType): {
  key(v: unknown): string | number;
  compare(a: string | number, b: string | number): number;
  out(v: string | number): unknown;
} {
  switch (type) {
    case "int":
      return {
        key: (v) => BigInt(v as string).toString(),
        compare: (a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0),
        out: (v) => v,
      };
    case "decimal":
      return {
        key: (v) => String(v),
        compare: (a, b) => compareDecimal(parseDecimal(a), parseDecimal(b)),
        out: (v) => v,
      };
    case "double":
      return { key: (v) => Number(v), compare: (a, b) => Number(a) - Number(b), out: (v) => v };
    case "timestamp":
      return {
        key: (v) => (v instanceof Date ? v : new Date(v as string)).getTime(),
        compare: (a, b) => Number(a) - Number(b),
        out: (v) => new Date(Number(v)),
      };
    default:
      // Strings compare by code point (like COLLATE "C"), the same on every machine.
      return { key: (v) => String(v), compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0), out: (v) => v };
  }
}

function distinctKey(v: unknown): string {
  if (v instanceof Date) return v.toISOString();
  if (typeof v === "string" && /^[+-]?\d*\.?\d+(?:[eE][+-]?\d+)?$/.test(v)) return canonicalDecimal(v);
  return typeof v === "string" ? v : JSON.stringify(v);
}

// The distinct values of an accumulator being folded, as a Set beside its (JSON) array.
const distinctSets = new WeakMap<string[], Set<string>>();

function opsFor(measure: TCompiledMeasure, type: TFieldType | undefined): Ops {
  switch (measure.fn) {
    case "count":
      return {
        empty: () => ({ n: 0 }),
        add: (a) => void (a as { n: number }).n++,
        merge: (a, b) => ({ n: (a as { n: number }).n + (b as { n: number }).n }),
        result: (a) => (a as { n: number }).n,
      };
    case "sum": {
      const t = type as Numeric;
      type Sum = { s: string | number };
      return {
        empty: () => ({ s: zero(t) }),
        add: (a, v) => addToSum(t, a as Sum, v),
        merge: (a, b) => ({ s: numText(t, addNum(t, sumOf(t, a as Sum), sumOf(t, b as Sum))) }),
        result: (a) => numText(t, sumOf(t, a as Sum)),
      };
    }
    case "avg": {
      const t = type as Numeric;
      type Avg = { s: string | number; n: number };
      return {
        empty: () => ({ s: zero(t), n: 0 }),
        add: (a, v) => {
          addToSum(t, a as Avg, v);
          (a as Avg).n++;
        },
        merge: (a, b) => ({
          s: numText(t, addNum(t, sumOf(t, a as Avg), sumOf(t, b as Avg))),
          n: (a as Avg).n + (b as Avg).n,
        }),
        result: (a) => {
          const n = (a as Avg).n;
          if (n === 0) return null;
          const s = sumOf(t, a as Avg);
          if (t === "decimal") return formatDecimal(divideDecimal(s as Decimal, n, AVG_DECIMAL_SCALE));
          return Number(s) / n;
        },
      };
    }
    case "min":
    case "max": {
      const o = ordered(type ?? "string");
      const better = (a: string | number | null, b: string | number | null) => {
        if (a === null) return b;
        if (b === null) return a;
        const c = o.compare(a, b);
        return (measure.fn === "min" ? c <= 0 : c >= 0) ? a : b;
      };
      return {
        empty: () => ({ v: null }),
        add: (a, v) =>
          void ((a as { v: string | number | null }).v = better(
            (a as { v: string | number | null }).v,
            o.key(v),
          )),
        merge: (a, b) => ({
          v: better((a as { v: string | number | null }).v, (b as { v: string | number | null }).v),
        }),
        result: (a) => {
          const v = (a as { v: string | number | null }).v;
          return v === null ? null : o.out(v);
        },
      };
    }
    case "count_distinct":
      return {
        empty: () => ({ d: [] }),
        add: (a, v) => {
          const d = (a as { d: string[] }).d;
          let seen = distinctSets.get(d);
          if (!seen) distinctSets.set(d, (seen = new Set(d)));
          const k = distinctKey(v);
          if (!seen.has(k)) {
            seen.add(k);
            d.push(k);
          }
        },
        merge: (a, b) => ({
          d: [...new Set([...(a as { d: string[] }).d, ...(b as { d: string[] }).d])].sort(),
        }),
        result: (a) => (a as { d: string[] }).d.length,
      };
  }
}

export type Accumulators = Record<string, Accumulator>;

/** The measures of one aggregate, prepared once per pipeline version. */
export interface MeasureSet {
  empty(): Accumulators;
  /**
   * Folds one row into `acc` (mutates it). `cel` is the row converted for conditions, when any measure
   * has one. A folded accumulator keeps its running sums aside: pass it through merge() (which returns
   * plain JSON) before storing it.
   */
  add(acc: Accumulators, row: Readonly<Record<string, unknown>>, cel: TCelRow | undefined): void;
  merge(a: Accumulators, b: Accumulators): Accumulators;
  results(acc: Accumulators): Record<string, unknown>;
  readonly hasConditions: boolean;
}

export function measureSet(
  measures: readonly TCompiledMeasure[],
  contract: Pick<TContract, "fields">,
): MeasureSet {
  const plan = measures.map((m) => ({
    m,
    ops: opsFor(m, m.column ? contract.fields[m.column]?.type : undefined),
  }));
  return {
    hasConditions: measures.some((m) => m.condition),
    empty: () => Object.fromEntries(plan.map(({ m, ops }) => [m.name, ops.empty()])),
    add(acc, row, cel) {
      for (const { m, ops } of plan) {
        if (m.condition && !m.condition.test(cel!)) continue;
        if (m.column !== undefined) {
          const value = row[m.column];
          if (value === null || value === undefined) continue;
          ops.add((acc[m.name] ??= ops.empty()), value);
        } else ops.add((acc[m.name] ??= ops.empty()), null);
      }
    },
    merge: (a, b) =>
      Object.fromEntries(
        plan.map(({ m, ops }) => [m.name, ops.merge(a[m.name] ?? ops.empty(), b[m.name] ?? ops.empty())]),
      ),
    results: (acc) =>
      Object.fromEntries(plan.map(({ m, ops }) => [m.name, ops.result(acc[m.name] ?? ops.empty())])),
  };
}
