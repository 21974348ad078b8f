// What a reconciliation of two versions of a pipeline (blue, serving; green, the candidate) is asked
// and what it answers. The caller — the rollout — passes each side's version id, its validated spec
// and the physical sink table it writes (schema-qualified, chosen by Sluice, never typed by a person);
// the report compares only what both sides have committed (docs/rollouts.md, "Reconciliation").
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { z } from "zod";

/** One side of the comparison. */
export interface TReconcileSide {
  pipelineVersionId: string;
  /** The version's validated spec (as registered). */
  spec: TPipelineSpec;
  /** The physical table the version writes, e.g. { schema: "sluice_sinks", name: "merchant_settlement_5m@v2" }. */
  table: { schema: string; name: string };
  /** For a spec with several outputs: which output's table this is. Absent for a one-sink spec. */
  output?: string;
}

export const ZReconcileLimits = z.object({
  /** Keys sampled from each of "only in blue" and "only in green". */
  samples: z.number().int().min(0).max(200).default(20),
  /** Value differences listed, largest first. */
  differences: z.number().int().min(0).max(500).default(50),
});

export interface TReconcileInput extends z.input<typeof ZReconcileLimits> {
  blue: TReconcileSide;
  green: TReconcileSide;
  /**
   * Where the comparison starts, when the two sides did not start reading at the same place (green
   * started from a timestamp, or after blue's retention dropped what blue read first). Windows: an
   * event time (rounded up to the common grain); rows: per partition the first offset both read.
   * Absent: from the beginning of both tables.
   */
  from?: { eventTime?: Date; offsets?: Record<string, number> };
}

/** How the two results are lined up: by final event-time windows, by source offsets, or as running totals. */
export type TReconcileBasis = "event_time" | "offsets" | "same_offsets";

export type TReconciliationStatus =
  /** Compared: see counts and differences (zero of each means the results agree). */
  | "compared"
  /** The two results cannot be lined up (different kinds, keys or windows): `notComparable` says why. */
  | "not_comparable"
  /** Nothing both sides have committed can be compared yet (a side has no table or no final window
   * yet; running totals at different offsets): `notComparable` says what to wait for. */
  | "waiting";

/** The compared range: event-time windows final on both sides, or the offsets both have read. */
export type TReconcileRange =
  | {
      basis: "event_time";
      /** Windows whose start is at or after this (null: from the first window of either side). */
      from: string | null;
      /** Windows whose end is at or before this: the lower of the two sides' final horizons, on the grain. */
      to: string | null;
      /** The grain both sides are compared at (the least common multiple of the window sizes). */
      grain: string;
      /** Each side's final horizon: its watermark minus its allowedLateness. */
      blueFinalUpTo: string | null;
      greenFinalUpTo: string | null;
    }
  | {
      basis: "offsets" | "same_offsets";
      topic: string;
      /** Per partition: rows whose source offset is in [from, to) on both sides. */
      partitions: { partition: number; from: number; to: number }[];
    };

export interface TSideCounts {
  /** Rows of the table inside the compared range (at the table's own grain: windows, rows). */
  rows: number;
  /** Distinct comparison keys inside the range (windows rolled up to the common grain). */
  keys: number;
  /** Windows and running aggregates: distinct values of the compared group-by columns. */
  groups?: number;
}

/** A key and its values, as text (decimals exact, timestamps ISO in UTC), long text cut at 200 characters. */
export type TRowValues = Record<string, string | null>;

export interface TValueDifference {
  key: TRowValues;
  /** Every compared column whose value differs: blue's, green's, and green − blue for numbers. */
  columns: { column: string; blue: string | null; green: string | null; delta: string | null }[];
  /** The largest |delta| of this key's numeric columns (what the list is ordered by); null without one. */
  magnitude: string | null;
}

export interface TColumnSummary {
  column: string;
  /** How each side's rows are merged to the common grain ("as is" when not rolled up). */
  merge: "as is" | "sum" | "min" | "max";
  /** Keys present on both sides whose value differs in this column. */
  differing: number;
  /** Numeric columns: the column's total over the keys each side has in the range. */
  blueTotal: string | null;
  greenTotal: string | null;
}

/** One outcome count over the input both sides have read, on each side. */
export interface TOutcomeCount {
  /** "input", "sink", "duplicate", "filtered", "quarantined", "deadLetter", "late", "stale",
   * "lateAccepted", "dropped:<expectation>", "violated:<expectation>" (warn: kept). */
  metric: string;
  blue: number;
  green: number;
}

export interface TOutcomeComparison {
  /** The batches counted on each side: those that read inside the range (one straddling its end, whole). */
  counted: {
    blue: { batches: number; firstBatchId: number | null; lastBatchId: number | null };
    green: { batches: number; firstBatchId: number | null; lastBatchId: number | null };
    /** True when both sides' counted batches read exactly the same offsets (counts are then exact). */
    sameInput: boolean;
  };
  counts: TOutcomeCount[];
  /** The differences that explain the results, in words: "dropped by expectation `x` in green: 412 (blue: 0)". */
  explanations: string[];
}

export interface TReconciliationReport {
  blue: { pipelineVersionId: string; table: string };
  green: { pipelineVersionId: string; table: string };
  status: TReconciliationStatus;
  basis: TReconcileBasis | null;
  /** Why some or all of the results cannot be compared (columns, measures, windows, keys). */
  notComparable: { what: string; reason: string }[];
  range: TReconcileRange | null;
  /** The columns rows are matched on (windows: the common group-by columns and `window_start`). */
  key: string[];
  columns: TColumnSummary[];
  counts: {
    blue: TSideCounts;
    green: TSideCounts;
    /** Keys on both sides with equal values in every compared column. */
    matching: number;
    onlyBlue: number;
    onlyGreen: number;
    /** Keys on both sides with a different value in at least one compared column. */
    differing: number;
    /** Keys in the range on one side whose row the other side has rewritten after the range (upserts,
     * CDC): not comparable until the other side catches up, never counted as "only in". */
    laterOnOtherSide: number;
  };
  onlyBlue: TRowValues[];
  onlyGreen: TRowValues[];
  /** At most `differences`, largest first. */
  differences: TValueDifference[];
  outcomes: TOutcomeComparison | null;
  durationMs: number;
}
