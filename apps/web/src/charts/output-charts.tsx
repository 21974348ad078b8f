"use client";
// The signals that differ per output of a pipeline with several outputs, a series per output named by
// it, in the same colour on every chart: rows written to its sink, rows late for it, its state and how
// far its watermark is behind. A pipeline with one output (or one sink behind a join) shows none: its
// output is the pipeline, already charted above.
import type { TOutputPoint, TOutputSeries, TPipelineSeries } from "@sluice/services";
import { PALETTE, perBatch, rowsOf } from "./series-rows";
import { TimeSeriesChart, type TChartSeries, type TTimeSeriesChartProps } from "./time-series-chart";

type TCommon = Pick<TTimeSeriesChartProps, "stepSeconds" | "markers" | "onZoom" | "emptyText">;

/** The charts with one value per output and bucket: what each plots, and how it reads. */
const ONE_VALUE_CHARTS: (Pick<TTimeSeriesChartProps, "id" | "title" | "definition" | "unit"> & {
  kind?: TChartSeries["kind"];
  value: (p: TOutputPoint) => number | null;
  /** Shown instead of an empty plot when batches ran (else why nothing ran). */
  empty?: string;
})[] = [
  {
    id: "output-written",
    title: "Rows written per output",
    definition:
      "Rows each output wrote to its own sink in the bucket (from its progress record's outputs). Rows late, filtered or dropped for one output may still be written by another.",
    unit: "count",
    value: (p) => p.written,
  },
  {
    id: "output-late",
    title: "Late rows per output",
    definition:
      "Rows behind each output's own watermark minus its allowedLateness: not applied to that output. A row late for one output may still count in a more patient one; the pipeline's late rows are only those late for every output.",
    unit: "count",
    kind: "bar",
    value: (p) => p.late,
    empty: "No output had late rows in this range.",
  },
  {
    id: "output-watermark",
    title: "Watermark lag per output",
    definition:
      "Commit time − each output's own watermark at the bucket's last batch. Rows older than its watermark minus its allowedLateness are late for it.",
    unit: "ms",
    value: (p) => perBatch(p, p.watermarkLagMs),
  },
];

export function OutputCharts({
  series: s,
  common,
  notRunning,
}: {
  series: TPipelineSeries;
  common: TCommon;
  notRunning: string | null;
}) {
  if (s.outputs.length < 2) return null;
  const color = (i: number) => PALETTE[i % PALETTE.length]!;
  const perOutput = (kind?: TChartSeries["kind"]): TChartSeries[] =>
    s.outputs.map((o, i) => ({ key: o.name, label: o.name, color: color(i), ...(kind ? { kind } : {}) }));
  /** One bucket's values, each output's under its own key(s). */
  const rows = (values: (o: TOutputSeries, p: TOutputPoint) => [string, number | null][]) =>
    rowsOf(s, (_p, i) =>
      Object.fromEntries(
        s.outputs.flatMap((o) => {
          const p = o.points[i];
          return p ? values(o, p) : [];
        }),
      ),
    );
  const bytesKey = (o: TOutputSeries) => `${o.name} bytes`;

  return (
    <>
      {ONE_VALUE_CHARTS.map(({ kind, value, empty, ...chart }) => (
        <TimeSeriesChart
          key={chart.id}
          {...common}
          {...chart}
          {...(empty ? { emptyText: notRunning ?? empty } : {})}
          series={perOutput(kind)}
          rows={rows((o, p) => [[o.name, value(p)]])}
        />
      ))}
      <TimeSeriesChart
        {...common}
        id="output-state"
        title="State per output"
        definition="Each output's state after the bucket's last batch: rows (left; its windows or CDC change points, and the join's waiting rows) and bytes (right, dashed). An output with a longer allowedLateness keeps more."
        unit="count"
        rightUnit="bytes"
        series={[
          ...perOutput(),
          ...s.outputs.map((o, i) => ({
            key: bytesKey(o),
            label: `${bytesKey(o)} (right axis)`,
            color: color(i),
            right: true,
            dashed: true,
          })),
        ]}
        rows={rows((o, p) => [
          [o.name, perBatch(p, p.stateRows)],
          [bytesKey(o), perBatch(p, p.stateBytes)],
        ])}
      />
    </>
  );
}
