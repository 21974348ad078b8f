// Reads of dedup state, and the record of a batch that stopped the pipeline.
import type pg from "pg";
import type { ExpectationFailure } from "../batch/process-batch";

/** Which of these keys dedup state holds; with `notBefore`, only keys whose time is not before it (the rest are about to be evicted). */
export async function lookupSeenKeys(
  db: pg.Pool,
  pipelineVersionId: string,
  keys: string[],
  notBefore: Date | null = null,
): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const res = await db.query<{ key: string }>(
    `SELECT key FROM dedup_state
      WHERE pipeline_version_id = $1 AND key = ANY(ARRAY(SELECT jsonb_array_elements_text($2::jsonb))) AND ($3::timestamptz IS NULL OR event_time >= $3)`,
    // The keys as one JSON array: node-postgres escapes a JS array element by element (two regex
    // replaces each), a cost per key that JSON.stringify does not have (docs/performance.md).
    [pipelineVersionId, JSON.stringify(keys), notBefore],
  );
  return new Set(res.rows.map((r) => r.key));
}

/** Written outside the (uncommitted) batch so the console can show which rule stopped the pipeline. */
export async function recordBatchFailure(
  db: pg.Pool,
  pipelineVersionId: string,
  batchId: number,
  f: ExpectationFailure,
): Promise<void> {
  await db.query(
    `INSERT INTO batch_failures (pipeline_version_id, batch_id, kind, rule, row_count, message, samples) VALUES ($1, $2, 'expectation', $3, $4, $5, $6)`,
    [
      pipelineVersionId,
      batchId,
      f.rule,
      f.rowCount,
      `expectation "${f.rule}" failed for ${f.rowCount} row(s)`,
      JSON.stringify(f.samples),
    ],
  );
}
