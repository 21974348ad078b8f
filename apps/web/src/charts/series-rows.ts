// The pipeline page's charts all plot buckets of one series answer (signals.series): its rows for a
// chart (the bucket's batch range for the tooltip, the chosen values), the page's colours, and gaps
// for per-batch values where no batch committed.
import type { TPipelineSeries, TSeriesPoint } from "@sluice/services";
import type { TChartRow } from "./time-series-chart";

export const PALETTE = [
  "#1f6feb",
  "#cf222e",
  "#1a7f37",
  "#bf8700",
  "#8250df",
  "#0969da",
  "#bc4c00",
  "#57606a",
];

export const rowsOf = (
  s: TPipelineSeries,
  values: (p: TSeriesPoint, i: number) => Record<string, number | null>,
  notes?: (i: number) => string[],
): TChartRow[] =>
  s.points.map((p, i) => ({
    t: p.t.getTime(),
    firstBatchId: p.firstBatchId,
    lastBatchId: p.lastBatchId,
    batches: p.batches,
    values: values(p, i),
    ...(notes ? { notes: notes(i) } : {}),
  }));

/** A per-batch value: null (a gap) in a bucket without batches. */
export const perBatch = (p: { batches: number }, v: number | null | undefined) =>
  p.batches > 0 ? (v ?? null) : null;
