// How the benchmarks print numbers.

/** Messages per second. */
export const rate = (n: number, ms: number) => Math.round((n * 1000) / ms);
/** 12,345 */
export const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
