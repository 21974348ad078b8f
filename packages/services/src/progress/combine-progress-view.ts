// What a pipeline that combines data did in a batch, for people: each output of a pipeline with several
// outputs (or the one output behind a join) — its sink, its own watermark, where the rows that reached
// it went (its own late count: a row late for one output may count in another), its state — and the
// join: rows joined, joined at the bound, missing, dead-lettered, rows waiting for the dimension and
// their bytes, the dimension's watermark. Read from the progress record's `outputs` and `join`
// (@sluice/engine store/progress-record.ts) leniently, like the rest of the record: a count the record
// lacks or that is not a count reads as 0, a part that is not the right shape is left out.
import type { CountedOutcome } from "@sluice/engine";

/** The outcomes an output has of its own (contract, decoding and dedup are the pipeline's, before any output). */
export type TOutputOutcome = Extract<
  CountedOutcome,
  "sink" | "duplicate" | "filtered" | "late" | "stale" | "deadLetter"
>;
export const OUTPUT_OUTCOMES: readonly TOutputOutcome[] = [
  "sink",
  "duplicate",
  "filtered",
  "late",
  "stale",
  "deadLetter",
];

export interface TOutputProgressView {
  /** The output's name; "" for a pipeline's one sink behind a join. */
  name: string;
  /** The table it writes, or "webhook". */
  sink: string;
  /** This output's own watermark after the batch. */
  watermark: Date | null;
  /** Rows that reached this output in the batch (from the source, or released by the join). */
  rows: number;
  outcomes: Record<TOutputOutcome, number> & { dropped: Record<string, number> };
  /** Behind its watermark but within its allowedLateness: still updated their window (in sink). */
  lateAccepted: number;
  /** Violations of this output's own expectations. */
  expectations: Record<string, number>;
  stateRows: number;
  stateBytes: number;
  /** Windows / CDC / webhook: what its operator did. */
  operator: Record<string, number | string> | null;
}

export interface TJoinProgressView {
  /** This batch's rows (and released ones) joined with the version the dimension confirmed. */
  joined: number;
  /** Joined at `waitFor` with the newest version known, not confirmed by the dimension. */
  joinedAtBound: number;
  /** No version at the row's time, emitted with the fields null (`onMissing: emit`). */
  missing: number;
  /** No version at the row's time, dead letter `dimension_missing` (`onMissing: deadLetter`). */
  deadLettered: number;
  /** Rows that started waiting in this batch, and waiting rows released in it. */
  held: number;
  released: number;
  /** Rows waiting for the dimension after the batch (state), and their bytes. */
  waiting: number;
  waitingBytes: number;
  /** Dimension versions kept (state), and their bytes. */
  versions: number;
  versionsBytes: number;
  /** Changes read from the changelog that changed a version; repeats; changes behind the dimension's watermark; changes that broke its contract. */
  changes: number;
  repeats: number;
  lateChanges: number;
  rejected: number;
  /** Changelog records read in the batch, and still unread after it. */
  dimensionRecords: number;
  dimensionBacklog: number;
  /** The dimension's watermark after the batch: rows up to it are joined for good. */
  dimensionWatermark: Date | null;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A count as people read it: 0 when absent, negative or fractional. */
function count(v: unknown): number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : 0;
}

function instant(v: unknown): Date | null {
  if (typeof v !== "string" || v === "") return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
}

function counts(v: unknown): Record<string, number> {
  if (!isObject(v)) return {};
  return Object.fromEntries(Object.entries(v).map(([k, n]) => [k, count(n)]));
}

function operatorOf(v: unknown): Record<string, number | string> | null {
  if (!isObject(v)) return null;
  const kept = Object.entries(v).filter(
    (e): e is [string, number | string] => typeof e[1] === "number" || typeof e[1] === "string",
  );
  return kept.length > 0 ? Object.fromEntries(kept) : null;
}

/** Each output in the record, in the record's order (the engine writes them in name order); [] without any. */
export function outputProgressViews(outputs: unknown): TOutputProgressView[] {
  if (!Array.isArray(outputs)) return [];
  return outputs.filter(isObject).map((o) => {
    const outcomes = isObject(o.outcomes) ? o.outcomes : {};
    return {
      name: typeof o.name === "string" ? o.name : "",
      sink: typeof o.sink === "string" ? o.sink : "",
      watermark: instant(o.watermark),
      rows: count(outcomes.rows),
      outcomes: {
        ...(Object.fromEntries(OUTPUT_OUTCOMES.map((k) => [k, count(outcomes[k])])) as Record<
          TOutputOutcome,
          number
        >),
        dropped: counts(outcomes.dropped),
      },
      lateAccepted: count(o.lateAccepted),
      expectations: counts(o.expectations),
      stateRows: count(o.stateRows),
      stateBytes: count(o.stateBytes),
      operator: operatorOf(o.operator),
    };
  });
}

/** The record's join report, or null for a pipeline without a join (or a record from before joins). */
export function joinProgressView(join: unknown): TJoinProgressView | null {
  if (!isObject(join) || join.kind !== "join") return null;
  return {
    joined: count(join.joined),
    joinedAtBound: count(join.joinedAtBound),
    missing: count(join.missing),
    deadLettered: count(join.deadLettered),
    held: count(join.held),
    released: count(join.released),
    waiting: count(join.waiting),
    waitingBytes: count(join.waitingBytes),
    versions: count(join.versions),
    versionsBytes: count(join.versionsBytes),
    changes: count(join.changes),
    repeats: count(join.repeats),
    lateChanges: count(join.lateChanges),
    rejected: count(join.rejected),
    dimensionRecords: count(join.dimensionRecords),
    dimensionBacklog: count(join.dimensionBacklog),
    dimensionWatermark: instant(join.dimensionWatermark),
  };
}
