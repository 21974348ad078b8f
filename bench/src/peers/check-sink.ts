// Every sink, every round, against `peers_expected` (peers-workload.ts): which windows are missing,
// which should not be there, and which hold other values — with a few of each to show what differed.
import type pg from "pg";

export interface SinkCheck {
  rows: number;
  missing: number;
  extra: number;
  differing: number;
  examples: string[];
}

export const isExact = (c: SinkCheck) => c.missing === 0 && c.extra === 0 && c.differing === 0;

/** `table` is one the benchmark named itself (never input); compared by value (numeric equality). */
export async function checkSink(pool: pg.Pool, table: string): Promise<SinkCheck> {
  const diff = await pool.query<{ kind: string; n: number; examples: string[] }>(`
    WITH d AS (
      SELECT CASE WHEN s.merchant_id IS NULL THEN 'missing' WHEN e.merchant_id IS NULL THEN 'extra' ELSE 'differing' END AS kind,
             coalesce(e.merchant_id, s.merchant_id) || ' ' || to_char(coalesce(e.window_start, s.window_start) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') ||
             ': expected ' || coalesce(e.events || ' events, settled ' || e.settled || ', refunded ' || e.refunded, 'no row') ||
             '; sink ' || coalesce(s.events || ' events, settled ' || s.settled || ', refunded ' || coalesce(s.refunded::text, 'null'), 'no row') AS what
        FROM peers_expected e
        FULL JOIN ${table} s USING (merchant_id, window_start)
       WHERE s.merchant_id IS NULL OR e.merchant_id IS NULL
          OR (s.window_end, s.settled, s.refunded, s.events) IS DISTINCT FROM (e.window_end, e.settled, e.refunded, e.events))
    SELECT kind, count(*)::int AS n, (array_agg(what ORDER BY what))[1:3] AS examples FROM d GROUP BY kind`);
  const rows = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  const by = new Map(diff.rows.map((r) => [r.kind, r]));
  return {
    rows: rows.rows[0]!.n,
    missing: by.get("missing")?.n ?? 0,
    extra: by.get("extra")?.n ?? 0,
    differing: by.get("differing")?.n ?? 0,
    examples: diff.rows.flatMap((r) => r.examples.map((e) => `${r.kind}: ${e}`)),
  };
}
