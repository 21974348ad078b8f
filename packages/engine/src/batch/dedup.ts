// Deduplication by key within the watermark. A key is a duplicate when it is already in the dedup
// state (seen in an earlier batch and not yet evicted) or earlier in this batch. State lives in
// Postgres and is evicted once the watermark passes the key's event time, so it stays bounded —
// except for a ledger whose table already refuses a second row of the key (dedupKeptBySink).
import { outputColumns, type TPipelineSpec } from "@sluice/pipeline-spec";

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

/**
 * A ledger whose sink table keeps its dedup keys: one text dedupe key that is exactly the primary key
 * of its append table, with no operator, outputs or join between the row and the table. The table's
 * `ON CONFLICT DO NOTHING` already refuses a second row of the key, for as long as the row is there
 * (longer than dedup state would), so the ledger neither writes dedup state nor looks keys up in it —
 * about half its Postgres work (docs/performance.md). `time` is the column holding each row's dedup
 * time (the event time, or the ingest time without eventTime): what a successor that does keep dedup
 * state is handed, from the table, at registration (store/dedup-from-table.ts). Undefined when the
 * ledger does not qualify, e.g. its event-time column is not in the table.
 */
export function dedupKeptBySink(spec: TPipelineSpec): { key: string; time: string } | undefined {
  const key = spec.dedupe?.key;
  const pg = spec.sink?.postgres;
  if (!key || key.length !== 1 || !pg || pg.mode !== "append") return undefined;
  if (spec.outputs || spec.join || spec.aggregate || spec.cdc) return undefined;
  if (pg.key?.length !== 1 || pg.key[0] !== key[0]) return undefined;
  const columns = outputColumns(spec);
  // Text only: the table's value then reads back as the very string dedupKey makes of it.
  if (columns.find((c) => c.name === key[0])?.type !== "string") return undefined;
  if (!spec.eventTime) return { key: key[0]!, time: "_ingest_time" };
  const time = columns.find((c) => c.name === spec.eventTime!.column);
  return time?.type === "timestamp" ? { key: key[0]!, time: time.name } : undefined;
}
