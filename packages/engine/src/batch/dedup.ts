// Deduplication by key within the watermark. A key is a duplicate when it is already in the dedup
// state (seen in an earlier batch and not yet evicted) or earlier in this batch. State lives in
// Postgres and is evicted once the watermark passes the key's event time, so it stays bounded.

/** One string per key tuple; JSON keeps ["a,b"] and ["a","b"] apart. */
export function dedupKey(row: Record<string, unknown>, columns: readonly string[]): string {
  if (columns.length === 1) {
    const v = row[columns[0]!];
    return typeof v === "string" ? v : JSON.stringify(v instanceof Date ? v.toISOString() : v);
  }
  return JSON.stringify(
    columns.map((c) => {
      const v = row[c];
      return v instanceof Date ? v.toISOString() : v;
    }),
  );
}

/** Where dedup state may be evicted: keys with an event time before this can no longer be duplicates. */
export function dedupHorizon(opts: {
  watermark: Date | null;
  maxSeen: Date | null;
  withinMs?: number;
}): Date | null {
  if (opts.withinMs === undefined) return opts.watermark;
  return opts.maxSeen ? new Date(opts.maxSeen.getTime() - opts.withinMs) : null;
}
