// `sluice run` has no poison-batch limit: nothing restarts it but a person (or their own supervisor),
// and each death is in front of them. What it does is say, before running, that the next batch is one
// an earlier run planned and never committed — if that run died (out of memory, killed), this one is
// about to read the same offsets and may die the same way. The workers count such attempts and fail
// the version instead (docs/workers.md, "A batch that kills its worker").
import type pg from "pg";
import { findUnfinishedPlan } from "@sluice/engine";
import { describeRanges } from "@sluice/services";

export async function describeUnfinishedBatch(
  pool: pg.Pool,
  pipelineVersionId: string,
  group?: { no: number; of: number },
): Promise<string | undefined> {
  const row = await findUnfinishedPlan(pool, pipelineVersionId, group);
  if (!row) return undefined;
  return (
    `batch ${row.batchId} (${describeRanges(row.ranges)}) was planned at ${row.plannedAt.toISOString()} by an earlier run that did not commit it; ` +
    `re-running it over the same offsets. If that run died (e.g. "JavaScript heap out of memory"), this one may too: ` +
    `give it more memory (NODE_OPTIONS=--max-old-space-size=…) or fix the records or the spec first.`
  );
}
