// The one retry policy: exponential backoff from a base, capped, optionally jittered. Every retry loop
// in Sluice (a failed batch, a webhook delivery, an alert notification, `sluice run` riding out an
// outage, the producer creating its topic) computes its wait here and differs only in its numbers.
// Pure and dependency-free, so every package may import it, the engine and the demo producer included.

export interface TRetryPolicy {
  /** The wait before the first retry. */
  baseMs: number;
  /** No wait is longer than this (before jitter). */
  capMs: number;
  /**
   * Spread each wait uniformly by ±this fraction (0.2: 80–120%), so that many retriers that failed
   * together do not retry together. 0 (the default): the wait is exact.
   */
  jitter?: number;
}

/**
 * Wait before retry `attempt` (1-based; 0 is treated as 1): baseMs·2^(attempt−1), at most capMs, then
 * spread by ±jitter. `random` returns [0, 1) (Math.random by default).
 */
export function retryDelayMs(
  policy: TRetryPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  const delay = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  return jitteredMs(delay, policy.jitter ?? 0, random);
}

/** `ms` spread uniformly by ±`jitter` (a fraction) and rounded to a millisecond; exactly `ms` for 0. */
export function jitteredMs(ms: number, jitter: number, random: () => number = Math.random): number {
  if (jitter === 0) return ms;
  return Math.round(ms * (1 - jitter + random() * 2 * jitter));
}
