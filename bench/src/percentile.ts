// Order statistics of measured times, as the benchmarks report them: the median of a few runs, and
// p99 of many gaps. Nearest rank: always a value that was measured, never an interpolation.

/** The value at quantile q (0…1) by nearest rank; NaN for no values. */
export function percentile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export const median = (xs: readonly number[]) => percentile(xs, 0.5);
