// Prometheus metrics per pipeline version, emitted by whichever worker ran the batch (sum counters
// across workers; gauges are dropped by a worker once another one holds the version's lease, so each
// version's gauges come from one worker at a time).
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { OUTCOMES, outcomeColumn, type BatchProgress } from "@sluice/engine";

const LABELS = ["pipeline", "version"] as const;
type Labels = { pipeline: string; version: string };

export interface PipelineMetrics {
  recordBatch(l: Labels, progress: BatchProgress, now: Date): void;
  recordEmpty(l: Labels): void;
  recordFailure(l: Labels, kind: "retriable" | "permanent" | "fenced"): void;
  recordOpen(l: Labels, reason: string, ms: number): void;
  /** Seconds between when a batch was due (previous commit + delay) and when it started. */
  recordStartLag(l: Labels, seconds: number): void;
  dropGauges(l: Labels): void;
}

export function createPipelineMetrics(registry: Registry): PipelineMetrics {
  const registers = [registry];
  const inputRows = new Counter({
    name: "sluice_pipeline_input_rows_total",
    help: "Rows read from the source by committed batches",
    labelNames: LABELS,
    registers,
  });
  const rows = new Counter({
    name: "sluice_pipeline_rows_total",
    help: "Rows by outcome (sink, duplicate, filtered, quarantined, dead_letter, late, stale, dropped)",
    labelNames: [...LABELS, "outcome"],
    registers,
  });
  const processedRate = new Gauge({
    name: "sluice_pipeline_processed_rows_per_second",
    help: "Rows per second of processing in the last batch",
    labelNames: LABELS,
    registers,
  });
  const inputRate = new Gauge({
    name: "sluice_pipeline_input_rows_per_second",
    help: "Rows per second arriving, over the last trigger interval",
    labelNames: LABELS,
    registers,
  });
  const duration = new Histogram({
    name: "sluice_pipeline_batch_duration_seconds",
    help: "Duration of committed batches, by phase (plan, read, process, commit, total)",
    labelNames: [...LABELS, "phase"],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers,
  });
  const backlog = new Gauge({
    name: "sluice_pipeline_backlog_offsets",
    help: "Offsets not yet read after the last batch",
    labelNames: LABELS,
    registers,
  });
  const stateRows = new Gauge({
    name: "sluice_pipeline_state_rows",
    help: "Rows of dedup state",
    labelNames: LABELS,
    registers,
  });
  const stateBytes = new Gauge({
    name: "sluice_pipeline_state_bytes",
    help: "Bytes of dedup state (key bytes + 8 per key)",
    labelNames: LABELS,
    registers,
  });
  const watermarkLag = new Gauge({
    name: "sluice_pipeline_watermark_lag_seconds",
    help: "Wall clock minus the watermark after the last batch",
    labelNames: LABELS,
    registers,
  });
  const lastBatch = new Gauge({
    name: "sluice_pipeline_last_batch_timestamp_seconds",
    help: "When the last batch committed",
    labelNames: LABELS,
    registers,
  });
  const batches = new Counter({
    name: "sluice_pipeline_batches_total",
    help: "Batches by result (committed, empty, replayed)",
    labelNames: [...LABELS, "result"],
    registers,
  });
  const violations = new Counter({
    name: "sluice_pipeline_expectation_violations_total",
    help: "Rows violating an expectation (warn and drop), by expectation",
    labelNames: [...LABELS, "expectation"],
    registers,
  });
  const failures = new Counter({
    name: "sluice_pipeline_batch_failures_total",
    help: "Failed batch attempts by kind (retriable, permanent, fenced)",
    labelNames: [...LABELS, "kind"],
    registers,
  });
  const opens = new Counter({
    name: "sluice_pipeline_runner_opens_total",
    help: "Runner (re)opens: cold (new Kafka consumer) or lease-moved (lease re-taken on a warm consumer)",
    labelNames: [...LABELS, "reason"],
    registers,
  });
  const openSeconds = new Histogram({
    name: "sluice_pipeline_runner_open_seconds",
    help: "Time to (re)open a runner",
    labelNames: [...LABELS, "reason"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const startLag = new Histogram({
    name: "sluice_pipeline_batch_start_lag_seconds",
    help: "Scheduling overhead: how long after it was due a batch started",
    labelNames: LABELS,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const gauges = [processedRate, inputRate, backlog, stateRows, stateBytes, watermarkLag, lastBatch];

  return {
    recordBatch(l, p, now) {
      inputRows.inc(l, p.inputRows);
      const o = p.outcomes;
      const dropped = Object.values(o.dropped).reduce((a, b) => a + b, 0);
      const counts = OUTCOMES.map(
        (outcome) => [outcomeColumn(outcome), outcome === "dropped" ? dropped : o[outcome]] as const,
      );
      for (const [outcome, n] of counts) if (n > 0) rows.inc({ ...l, outcome }, n);
      for (const [expectation, n] of Object.entries(p.expectations))
        if (n > 0) violations.inc({ ...l, expectation }, n);
      for (const phase of ["plan", "read", "process", "commit", "total"] as const)
        duration.observe({ ...l, phase }, p.durationMs[phase] / 1000);
      processedRate.set(l, p.processedRowsPerSecond);
      inputRate.set(l, p.inputRowsPerSecond);
      backlog.set(l, p.backlog);
      stateRows.set(l, p.stateRows);
      stateBytes.set(l, p.stateBytes);
      if (p.watermark) watermarkLag.set(l, Math.max(0, (now.getTime() - Date.parse(p.watermark)) / 1000));
      lastBatch.set(l, now.getTime() / 1000);
      batches.inc({ ...l, result: p.replayed ? "replayed" : "committed" });
    },
    recordEmpty(l) {
      batches.inc({ ...l, result: "empty" });
      backlog.set(l, 0);
    },
    recordFailure(l, kind) {
      failures.inc({ ...l, kind });
    },
    recordOpen(l, reason, ms) {
      opens.inc({ ...l, reason });
      openSeconds.observe({ ...l, reason }, ms / 1000);
    },
    recordStartLag(l, seconds) {
      startLag.observe(l, Math.max(0, seconds));
    },
    dropGauges(l) {
      for (const g of gauges) g.remove(l);
    },
  };
}
