"use client";
// A rollout's two versions on the same charts and time axis: blue (serving) and green (candidate),
// each from its own series answer (signals.series with the version) over one explicit range, so their
// buckets line up. Blue is drawn solid, green dashed, in the colours the page's side cards use.
import type { TPipelineSeries, TSeriesPoint } from "@sluice/services";
import { TimeSeriesChart, type TChartRow, type TChartSeries } from "./time-series-chart";

export const BLUE = "#1f6feb";
export const GREEN = "#1a7f37";

/** One row per bucket of either side, blue's and green's value of one signal side by side. */
function pairedRows(
  blue: TPipelineSeries,
  green: TPipelineSeries,
  value: (p: TSeriesPoint) => number | null,
): TChartRow[] {
  const byT = new Map<number, TChartRow>();
  const add = (s: TPipelineSeries, side: "blue" | "green") => {
    for (const p of s.points) {
      const t = p.t.getTime();
      const row = byT.get(t) ?? {
        t,
        firstBatchId: null,
        lastBatchId: null,
        batches: 0,
        values: { blue: null, green: null },
      };
      row.values[side] = value(p);
      row.batches += p.batches;
      byT.set(t, row);
    }
  };
  add(blue, "blue");
  add(green, "green");
  return [...byT.values()].sort((a, b) => a.t - b.t);
}

export function RolloutCharts({
  blue,
  green,
  versions,
}: {
  blue: TPipelineSeries;
  green: TPipelineSeries;
  versions: { blue: number; green: number };
}) {
  const series: TChartSeries[] = [
    { key: "blue", label: `blue v${versions.blue}`, color: BLUE },
    { key: "green", label: `green v${versions.green}`, color: GREEN, dashed: true },
  ];
  const common = { stepSeconds: blue.stepSeconds, series, markers: [] };
  const perBatch = (p: TSeriesPoint, v: number | null | undefined) => (p.batches > 0 ? (v ?? null) : null);
  return (
    <div className="charts" data-testid="rollout-charts">
      <TimeSeriesChart
        {...common}
        id="rollout-processing"
        title="Processing rate"
        definition="Rows per second each version committed (batch_log input rows ÷ bucket). Green above blue while it catches up from its starting offsets; the two meet once it has."
        unit="rate"
        emptyText="Neither version committed a batch in this range."
        rows={pairedRows(blue, green, (p) => p.processingRate)}
      />
      <TimeSeriesChart
        {...common}
        id="rollout-backlog"
        title="Backlog"
        definition="Events on the topic each version has not committed yet (latest − committed offset, summed over partitions). Green's falls to blue's as it catches up."
        unit="count"
        emptyText="No offset samples in this range (the workers sample every 10 s while a version runs)."
        rows={pairedRows(blue, green, (p) => p.backlog)}
      />
      <TimeSeriesChart
        {...common}
        id="rollout-state"
        title="State rows"
        definition="Dedup keys, open windows and CDC change points each version holds after the bucket's last batch (checkpoint state_rows). A ledger keyed by its dedupe key keeps its ids in its own table, so 0 here."
        unit="count"
        emptyText={
          [...blue.points, ...green.points].some((p) => p.batches > 0)
            ? "No state held: every batch of both versions in this range left 0 state rows."
            : "Neither version committed a batch in this range."
        }
        rows={pairedRows(blue, green, (p) => perBatch(p, p.stateRows))}
      />
      <TimeSeriesChart
        {...common}
        id="rollout-not-sunk"
        title="Rows that did not reach the sink"
        definition="Per bucket and version: rows dropped by an expectation, late, duplicate, quarantined or dead-lettered. A green that drops what blue keeps shows here first."
        unit="count"
        emptyText="Every row of both versions reached its sink in this range."
        rows={pairedRows(blue, green, (p) =>
          p.batches > 0
            ? p.outcomes.dropped +
              p.outcomes.late +
              p.outcomes.duplicate +
              p.outcomes.quarantined +
              p.outcomes.deadLetter
            : null,
        )}
      />
    </div>
  );
}
