// Reads of dedup state, and the record of a batch that stopped the pipeline.
import type pg from "pg";
import type { ExpectationFailure } from "../batch/process-batch";
import { ExpectationFailedError } from "../errors";

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

/** A `fail` expectation: the failures are recorded, and the batch stops without committing. */
export async function stopForExpectations(
  db: pg.Pool,
  pipelineVersionId: string,
  batchId: number,
  failures: ExpectationFailure[],
): Promise<never> {
  for (const f of failures) await recordBatchFailure(db, pipelineVersionId, batchId, f);
  const f = failures[0]!;
  throw new ExpectationFailedError(
    `batch ${batchId} stopped by expectation "${f.rule}" (action: fail): ${f.rowCount} row(s) violate it; nothing was committed. ` +
      `Fix the data or the spec, then run again: the batch re-runs over the same offsets.`,
    f.rule,
    f.rowCount,
  );
}
