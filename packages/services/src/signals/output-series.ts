// Each output's chart points, from the output rollups of one version: a pipeline with several outputs
// writes, lates and keeps state per output (a row late for the fraud view may still count for finance),
// so the signals that differ per output are a series per output, named by the output. Like the
// pipeline's points, one point per bucket of the range with explicit gaps.
import type { TOutputBucketRow } from "./rollup-queries";
import type { TBucketing } from "./time-range";

export interface TOutputPoint {
  t: Date;
  batches: number;
  /** Rows that reached the output. */
  rows: number;
  /** Rows it wrote to its sink. */
  written: number;
  /** Rows behind its own watermark minus its allowedLateness. */
  late: number;
  /** Behind its watermark but within allowedLateness (written). */
  lateAccepted: number;
  /** After the bucket's last batch; null without batches. */
  stateRows: number | null;
  stateBytes: number | null;
  /** Commit time − the output's watermark at the bucket's last batch (ms); null without one. */
  watermarkLagMs: number | null;
}

export interface TOutputSeries {
  /** The output's name in the spec. */
  name: string;
  points: TOutputPoint[];
}

/** A series per output named in the rows, by name; none for a pipeline whose records have no outputs. */
export function outputSeries(b: TBucketing, rows: TOutputBucketRow[]): TOutputSeries[] {
  const names = [...new Set(rows.map((r) => r.output))].sort();
  return names.map((name) => {
    const at = new Map(rows.filter((r) => r.output === name).map((r) => [r.t.getTime(), r]));
    return {
      name,
      points: b.starts.map((t): TOutputPoint => {
        const r = at.get(t.getTime());
        return {
          t,
          batches: r?.batches ?? 0,
          rows: r?.rows ?? 0,
          written: r?.sink ?? 0,
          late: r?.late ?? 0,
          lateAccepted: r?.late_accepted ?? 0,
          stateRows: r ? r.state_rows : null,
          stateBytes: r ? r.state_bytes : null,
          watermarkLagMs: r?.watermark ? r.last_committed_at.getTime() - r.watermark.getTime() : null,
        };
      }),
    };
  });
}
