// Outcome counts summed over the batches that read inside an offset range, from the progress records
// in batch_log — what a reconciliation of two versions explains its differences with ("dropped by
// expectation x in green: 412"). Set-based: one pass over the version's batch_log rows in Postgres.
// The version's lineage counts too: a version that continued another's checkpoint (continued_from_id)
// continued its sink table, so the batches that wrote the rows it holds are partly its predecessors'.
import type pg from "pg";
import { LINEAGE_SQL } from "./version-lineage";

export interface OutcomeTotals {
  /**
   * Batches counted: every batch that read anything inside [from, to) — whole, so a batch straddling
   * an end counts with all its rows — and batches without a range (dead-letter replays).
   */
  batches: number;
  firstBatchId: number | null;
  lastBatchId: number | null;
  /** Per partition, the offsets the counted batches read: [lowest start, highest end). */
  read: Record<string, { from: number; to: number }>;
  /**
   * Sums: "input", each outcome ("sink", "duplicate", "filtered", "quarantined", "deadLetter", "late",
   * "stale"), "dropped:<expectation>", "expectation:<name>" (violations, warn and drop), "lateAccepted";
   * with an output named, the same under "output." from that output's own record.
   */
  metrics: Record<string, number>;
}

/**
 * @param to   per partition the end (exclusive) of the range; a partition absent is not counted.
 * @param from per partition the start of the range (default 0).
 * @param output an output's name, for a spec with several outputs.
 */
export async function sumOutcomesWithin(
  db: pg.Pool | pg.PoolClient,
  pipelineVersionId: string,
  to: Record<string, number>,
  from: Record<string, number> = {},
  output?: string,
): Promise<OutcomeTotals> {
  const counted = `WITH RECURSIVE ${LINEAGE_SQL},
    counted AS (
      SELECT b.batch_id, b.input_rows, b.progress FROM batch_log b JOIN lineage l ON b.pipeline_version_id = l.id
       WHERE jsonb_array_length(b.progress -> 'sources') = 0 OR EXISTS (
         SELECT 1 FROM jsonb_array_elements(b.progress -> 'sources') s
          WHERE (s ->> 'endOffset')::bigint > (s ->> 'startOffset')::bigint
            AND (s ->> 'startOffset')::bigint < coalesce(($2::jsonb ->> (s ->> 'partition'))::bigint, -1)
            AND (s ->> 'endOffset')::bigint > coalesce(($3::jsonb ->> (s ->> 'partition'))::bigint, 0)))`;
  const params = [pipelineVersionId, JSON.stringify(to), JSON.stringify(from)];
  const numbers = (path: string, prefix: string) =>
    `SELECT ${prefix} || e.key, (e.value #>> '{}')::bigint FROM jsonb_each(${path}) e WHERE jsonb_typeof(e.value) = 'number'`;
  // One query at a time: the caller may pass one connection (a snapshot).
  const metrics = await db.query<{ metric: string; value: string }>(
    `${counted}
       SELECT m.metric, sum(m.value)::text AS value FROM counted c CROSS JOIN LATERAL (
         SELECT 'input' AS metric, c.input_rows::bigint AS value
         UNION ALL ${numbers("c.progress -> 'outcomes'", "''")}
         UNION ALL ${numbers("c.progress -> 'outcomes' -> 'dropped'", "'dropped:'")}
         UNION ALL ${numbers("c.progress -> 'expectations'", "'expectation:'")}
         UNION ALL SELECT 'lateAccepted', coalesce((c.progress ->> 'lateAccepted')::bigint, 0)
         UNION ALL SELECT 'output.' || n.metric, n.value FROM jsonb_array_elements(coalesce(c.progress -> 'outputs', '[]')) o
           CROSS JOIN LATERAL (
             ${numbers("o -> 'outcomes'", "''")}
             UNION ALL ${numbers("o -> 'outcomes' -> 'dropped'", "'dropped:'")}
             UNION ALL ${numbers("o -> 'expectations'", "'expectation:'")}
             UNION ALL SELECT 'lateAccepted', coalesce((o ->> 'lateAccepted')::bigint, 0)) n(metric, value)
          WHERE o ->> 'name' = $4::text
       ) m GROUP BY m.metric`,
    [...params, output ?? null],
  );
  const batches = await db.query<{ batches: string; first: string | null; last: string | null }>(
    `${counted} SELECT count(*)::text AS batches, min(batch_id)::text AS first, max(batch_id)::text AS last FROM counted`,
    params,
  );
  const read = await db.query<{ partition: string; from: string; to: string }>(
    `${counted} SELECT s ->> 'partition' AS partition, min((s ->> 'startOffset')::bigint)::text AS from,
              max((s ->> 'endOffset')::bigint)::text AS to
         FROM counted c CROSS JOIN LATERAL jsonb_array_elements(c.progress -> 'sources') s GROUP BY 1`,
    params,
  );
  const b = batches.rows[0]!;
  return {
    batches: Number(b.batches),
    firstBatchId: b.first === null ? null : Number(b.first),
    lastBatchId: b.last === null ? null : Number(b.last),
    read: Object.fromEntries(read.rows.map((r) => [r.partition, { from: Number(r.from), to: Number(r.to) }])),
    metrics: Object.fromEntries(metrics.rows.map((r) => [r.metric, Number(r.value)])),
  };
}
