// End-to-end latency of a batch: from each row's Kafka append time (the record timestamp, Sluice's
// ingest time) to the commit of its batch. Recorded per batch as percentiles in the progress record,
// so charts never recompute anything per row. The timestamps are sorted once, before the commit
// transaction; inside it only the commit instant is subtracted (O(1)), so the lock is not held longer.

export interface LatencyPercentiles {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** The batch's ingest times, sorted ascending (a typed array: one allocation, numeric sort). */
export function sortedIngestTimes(timestamps: Iterable<number>): Float64Array {
  const sorted = Float64Array.from(timestamps);
  sorted.sort();
  return sorted;
}

/**
 * Latency percentiles at `commitAt` (ms), nearest-rank: the p-th percentile latency belongs to the row
 * whose ingest time is the (1 − p)-th percentile (older rows waited longer). Null for a batch without rows.
 */
export function latencyPercentiles(sortedIngest: Float64Array, commitAt: number): LatencyPercentiles | null {
  const n = sortedIngest.length;
  if (n === 0) return null;
  // The p-th latency by nearest rank is the ceil(p·n)-th smallest, i.e. ingest index n − ceil(p·n).
  const waited = (p: number) =>
    Math.max(0, Math.round(commitAt - sortedIngest[Math.max(0, n - Math.ceil(p * n))]!));
  return {
    p50: waited(0.5),
    p95: waited(0.95),
    p99: waited(0.99),
    max: Math.max(0, Math.round(commitAt - sortedIngest[0]!)),
  };
}
