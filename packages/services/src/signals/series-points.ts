// Chart points from the rollup rows of one version: one point per bucket of the range, with explicit
// gaps (a bucket without batches has batches 0, rates 0 and no per-batch values; one without offset
// samples has no backlog), so a chart draws a gap instead of inventing a line through it.
import { outcomeColumn, perOutcome, type Outcome } from "@sluice/engine";
import { offsetPoints, sampleOf } from "./offset-signals";
import type {
  TBatchBucketRow,
  TCountBucketRow,
  TOffsetBucketRow,
  TPartitionBucketRow,
} from "./rollup-queries";
import type { TBucketing } from "./time-range";

export interface TSeriesPoint {
  /** The bucket's start; it covers [t, t + step). */
  t: Date;
  batches: number;
  /** The batch range committed in the bucket; null without batches. */
  firstBatchId: number | null;
  lastBatchId: number | null;
  /** Events per second appended to the topic (offset samples). */
  inputRate: number | null;
  /** Rows per second committed (batch_log input rows ÷ bucket seconds). */
  processingRate: number;
  backlog: number | null;
  inputRows: number;
  /** Rows per outcome (dropped: by every `drop` expectation). */
  outcomes: Record<Outcome, number>;
  /** Expectation violations (warn and drop), all expectations. */
  violations: number;
  /** Batches whose outcomes did not add up to their input. */
  unbalanced: number;
  /** Mean per batch (ms); null without batches. */
  durationMs: { plan: number; read: number; process: number; commit: number; total: number } | null;
  /** The worst batch's end-to-end latency percentiles (ms); null without a batch with rows. */
  latencyMs: { p50: number; p95: number; p99: number } | null;
  stateRows: number | null;
  stateBytes: number | null;
  /** Commit time − watermark at the bucket's last batch (ms). */
  watermarkLagMs: number | null;
  /** Commit time − newest event time at the bucket's last batch (ms). */
  eventTimeLagMs: number | null;
}

export interface TPartitionPoint {
  t: Date;
  backlog: number | null;
  rowsRead: number;
  /** Commit time − the partition's newest event time, at the bucket's last batch (ms). */
  eventTimeLagMs: number | null;
  /** Idle at the bucket's last batch (no data for the spec's idleTimeout: it no longer holds the watermark). */
  idle: boolean | null;
}

export interface TExpectationSeries {
  name: string;
  /** Violations per bucket, aligned with the points. */
  values: number[];
}

const lag = (at: Date | null, event: Date | null) => (at && event ? at.getTime() - event.getTime() : null);

export function seriesPoints(
  b: TBucketing,
  rows: {
    batches: TBatchBucketRow[];
    violations: TCountBucketRow[];
    partitions: TPartitionBucketRow[];
    offsets: TOffsetBucketRow[];
  },
): {
  points: TSeriesPoint[];
  partitions: { partition: number; points: TPartitionPoint[] }[];
  expectations: TExpectationSeries[];
} {
  const index = new Map(b.starts.map((t, i) => [t.getTime(), i]));
  const offsets = offsetPoints(rows.offsets.map(sampleOf));
  const offsetAt = new Map(offsets.map((o) => [o.t.getTime(), o]));
  const batchAt = new Map(rows.batches.map((r) => [r.t.getTime(), r]));
  const violationsAt = new Map<number, number>();
  for (const v of rows.violations)
    violationsAt.set(v.t.getTime(), (violationsAt.get(v.t.getTime()) ?? 0) + v.n);

  const points = b.starts.map((t): TSeriesPoint => {
    const r = batchAt.get(t.getTime());
    const o = offsetAt.get(t.getTime());
    const n = r?.batches ?? 0;
    return {
      t,
      batches: n,
      firstBatchId: r ? r.first_batch_id : null,
      lastBatchId: r ? r.last_batch_id : null,
      inputRate: o?.inputRate ?? null,
      processingRate: (r?.input_rows ?? 0) / b.stepSeconds,
      backlog: o?.backlog ?? null,
      inputRows: r?.input_rows ?? 0,
      outcomes: perOutcome((outcome) => r?.[outcomeColumn(outcome)] ?? 0),
      violations: violationsAt.get(t.getTime()) ?? 0,
      unbalanced: r?.unbalanced ?? 0,
      durationMs:
        r && n > 0
          ? {
              plan: r.plan_ms / n,
              read: r.read_ms / n,
              process: r.process_ms / n,
              commit: r.commit_ms / n,
              total: r.total_ms / n,
            }
          : null,
      latencyMs:
        r && r.latency_p50 !== null
          ? { p50: r.latency_p50, p95: r.latency_p95 ?? r.latency_p50, p99: r.latency_p99 ?? r.latency_p50 }
          : null,
      stateRows: r ? r.state_rows : null,
      stateBytes: r ? r.state_bytes : null,
      watermarkLagMs: r ? lag(r.last_committed_at, r.watermark) : null,
      eventTimeLagMs: r ? lag(r.last_committed_at, r.event_time_max) : null,
    };
  });

  const partitionIds = [
    ...new Set([...rows.partitions.map((p) => p.partition), ...rows.offsets.map((o) => o.partition)]),
  ].sort((x, y) => x - y);
  const partitions = partitionIds.map((partition) => {
    const rolled = new Map(
      rows.partitions.filter((p) => p.partition === partition).map((p) => [p.t.getTime(), p]),
    );
    return {
      partition,
      points: b.starts.map((t): TPartitionPoint => {
        const p = rolled.get(t.getTime());
        const backlog = offsetAt.get(t.getTime())?.partitions[partition];
        return {
          t,
          backlog: backlog ?? null,
          rowsRead: p?.rows_read ?? 0,
          eventTimeLagMs: p ? lag(p.last_committed_at, p.event_time_max) : null,
          idle: p?.idle ?? null,
        };
      }),
    };
  });

  const names = [...new Set(rows.violations.map((v) => v.name))].sort();
  const expectations = names.map((name) => {
    const values = b.starts.map(() => 0);
    for (const v of rows.violations)
      if (v.name === name) {
        const i = index.get(v.t.getTime());
        if (i !== undefined) values[i] = v.n;
      }
    return { name, values };
  });
  return { points, partitions, expectations };
}
