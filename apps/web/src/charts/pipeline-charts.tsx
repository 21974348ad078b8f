"use client";
// The pipeline page's charts, each built from the one series answer (signals.series): which signal,
// its definition, and which numbers of each bucket it plots. Definitions match docs/console.md.
import type { TPipelineSeries } from "@sluice/services";
import { formatClock } from "@/lib/format";
import { OUTCOME_LABELS } from "@/lib/outcome-labels";
import { OutputCharts } from "./output-charts";
import { PALETTE, perBatch, rowsOf } from "./series-rows";
import { TimeSeriesChart, type TChartMarker, type TChartSeries } from "./time-series-chart";

export function PipelineCharts({
  series: s,
  onZoom,
  notRunning,
}: {
  series: TPipelineSeries;
  onZoom: (from: Date, to: Date) => void;
  notRunning: string | null;
}) {
  const markers: TChartMarker[] = s.markers.map((m) => ({ at: m.at.getTime(), label: m.label }));
  const common = {
    stepSeconds: s.stepSeconds,
    markers,
    onZoom,
    emptyText: notRunning ?? "No batch committed in this range.",
  };
  const partitionSeries = (prefix: string): TChartSeries[] =>
    s.partitions.map((p, i) => ({
      key: `${prefix}${p.partition}`,
      label: `partition ${p.partition}`,
      color: PALETTE[i % PALETTE.length]!,
    }));
  const idleNotes = (i: number) =>
    s.partitions
      .filter((p) => p.points[i]?.idle)
      .map((p) => `partition ${p.partition} idle (no longer holds the watermark)`);

  return (
    <>
      {markers.length > 0 ? (
        <p className="small" data-testid="chart-markers">
          <span style={{ color: "#8250df" }}>┆</span> In this range:{" "}
          {s.markers.map((m, i) => (
            <span key={i}>
              {i > 0 ? " · " : ""}
              <span className="mono">{formatClock(m.at)}</span> {m.label}
            </span>
          ))}
        </p>
      ) : null}
      <div className="charts" data-testid="pipeline-charts">
        <TimeSeriesChart
          {...common}
          id="rates"
          title="Input vs processing rate"
          definition="Input: events per second appended to the topic (offset samples). Processing: rows per second committed (batch_log input rows ÷ bucket). Processing under input for long = falling behind."
          unit="rate"
          emptyText={notRunning ?? "No input and nothing processed in this range."}
          series={[
            { key: "input", label: "input", color: "#9aa5b1", kind: "area" },
            { key: "processing", label: "processing", color: "#1f6feb" },
          ]}
          rows={rowsOf(s, (p) => ({ input: p.inputRate, processing: p.processingRate }))}
        />
        <TimeSeriesChart
          {...common}
          id="backlog"
          title="Backlog"
          definition="Events on the topic not yet committed (latest − committed offset, summed over partitions), at each bucket's last offset sample. Rises while paused or stuck."
          unit="count"
          emptyText="No offset samples in this range (the workers sample every 10 s while a version is not stopped)."
          series={[
            { key: "backlog", label: "total", color: "#cf222e", kind: "area" },
            ...partitionSeries("p").map((x) => ({ ...x, dashed: true })),
          ]}
          rows={rowsOf(s, (p, i) => ({
            backlog: p.backlog,
            ...Object.fromEntries(s.partitions.map((q) => [`p${q.partition}`, q.points[i]?.backlog ?? null])),
          }))}
        />
        <TimeSeriesChart
          {...common}
          id="duration"
          title="Batch duration by phase"
          definition="Mean per batch in the bucket: plan (offsets), read (Kafka), process (decode … dedup, operator), commit (the one Postgres transaction). Read-ahead overlaps read and process with the previous commit."
          unit="ms"
          series={[
            { key: "plan", label: "plan", color: "#8250df", kind: "area", stack: "phase" },
            { key: "read", label: "read", color: "#0969da", kind: "area", stack: "phase" },
            { key: "process", label: "process", color: "#bf8700", kind: "area", stack: "phase" },
            { key: "commit", label: "commit", color: "#1a7f37", kind: "area", stack: "phase" },
          ]}
          rows={rowsOf(s, (p) => ({
            plan: p.durationMs?.plan ?? null,
            read: p.durationMs?.read ?? null,
            process: p.durationMs?.process ?? null,
            commit: p.durationMs?.commit ?? null,
          }))}
        />
        <TimeSeriesChart
          {...common}
          id="latency"
          title="End-to-end latency"
          definition="Kafka append time of a row → commit of its batch. Each batch records its p50/p95/p99 (nearest rank); a bucket shows its worst batch's."
          unit="ms"
          series={[
            { key: "p50", label: "p50", color: "#1a7f37" },
            { key: "p95", label: "p95", color: "#bf8700" },
            { key: "p99", label: "p99", color: "#cf222e" },
          ]}
          rows={rowsOf(s, (p) => ({
            p50: p.latencyMs?.p50 ?? null,
            p95: p.latencyMs?.p95 ?? null,
            p99: p.latencyMs?.p99 ?? null,
          }))}
        />
        <TimeSeriesChart
          {...common}
          id="lag"
          title="Watermark and event-time lag"
          definition="Commit time − each partition's newest event time (left), and commit time − the watermark (right; at least the spec's watermarkDelay). An idle partition (no data for its idleTimeout) no longer holds the watermark back."
          unit="ms"
          rightUnit="ms"
          series={[
            ...partitionSeries("e"),
            {
              key: "watermark",
              label: "watermark lag (right axis)",
              color: "#57606a",
              right: true,
              dashed: true,
            },
          ]}
          rows={rowsOf(
            s,
            (p, i) => ({
              watermark: perBatch(p, p.watermarkLagMs),
              ...Object.fromEntries(
                s.partitions.map((q) => [`e${q.partition}`, q.points[i]?.eventTimeLagMs ?? null]),
              ),
            }),
            idleNotes,
          )}
        />
        <TimeSeriesChart
          {...common}
          id="state"
          title="State rows and bytes"
          definition="Dedup keys, open windows and CDC change points after the bucket's last batch (checkpoint state_rows / state_bytes). A ledger keyed by its dedupe key keeps its ids in its own table, so 0 here."
          unit="count"
          emptyText={
            notRunning ??
            (s.points.some((p) => p.batches > 0)
              ? "No state held: every batch in this range left 0 state rows."
              : "No batch committed in this range.")
          }
          rightUnit="bytes"
          series={[
            { key: "rows", label: "rows", color: "#1f6feb" },
            { key: "bytes", label: "bytes", color: "#bc4c00", right: true, dashed: true },
          ]}
          rows={rowsOf(s, (p) => ({ rows: perBatch(p, p.stateRows), bytes: perBatch(p, p.stateBytes) }))}
        />
        <TimeSeriesChart
          {...common}
          id="violations"
          title="Violations per expectation"
          definition="Rows that violated each expectation in the bucket (warn: kept and counted; drop: dropped). One row can violate several."
          unit="count"
          emptyText={notRunning ?? "No expectation was violated in this range."}
          series={s.expectations.map((e, i) => ({
            key: e.name,
            label: e.name,
            color: PALETTE[i % PALETTE.length]!,
            kind: "bar",
            stack: "v",
          }))}
          rows={rowsOf(s, (_p, i) =>
            Object.fromEntries(s.expectations.map((e) => [e.name, e.values[i] ?? 0])),
          )}
        />
        <TimeSeriesChart
          {...common}
          id="outcomes"
          title="Late, duplicate, quarantined and dead-lettered rows"
          definition="Input rows per bucket that did not reach the sink, by outcome: late (behind the watermark), duplicate (dedup key seen), quarantined (contract), dead letter (undecodable)."
          unit="count"
          emptyText={notRunning ?? "Every row in this range reached the sink."}
          series={[
            { key: "late", label: OUTCOME_LABELS.late, color: "#bf8700", kind: "bar", stack: "o" },
            { key: "duplicate", label: OUTCOME_LABELS.duplicate, color: "#57606a", kind: "bar", stack: "o" },
            {
              key: "quarantined",
              label: OUTCOME_LABELS.quarantined,
              color: "#8250df",
              kind: "bar",
              stack: "o",
            },
            {
              key: "deadLetter",
              label: OUTCOME_LABELS.deadLetter,
              color: "#cf222e",
              kind: "bar",
              stack: "o",
            },
          ]}
          rows={rowsOf(s, (p) => ({
            late: p.outcomes.late,
            duplicate: p.outcomes.duplicate,
            quarantined: p.outcomes.quarantined,
            deadLetter: p.outcomes.deadLetter,
          }))}
        />
        <OutputCharts series={s} common={common} notRunning={notRunning} />
      </div>
    </>
  );
}
