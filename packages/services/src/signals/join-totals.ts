// A join's counts over a range of batches, for the graph (pipeline-flow.ts): the progress records'
// `join` reports (@sluice/engine join/join-operator.ts) and `sink` outcomes summed over the range's
// batches — first_batch_id..last_batch_id of the rollup buckets the range's totals came from, so both
// count the same batches. The rollups do not keep the join's counts; this reads batch_log along its
// primary key (pipeline_version_id, batch_id), and only for a pipeline with a join. A count a record
// lacks, or that is not a number, reads as 0, as everywhere the console reads progress records.
import { rowsOf, sql, tables, type PrismaClient } from "@sluice/db";
import { FLOW_JOIN_COUNTS, type TFlowJoinTotals } from "./pipeline-flow";

/** null when no batch in first..last has a join report. */
export async function queryJoinTotals(
  db: PrismaClient,
  pipelineVersionId: string,
  firstBatchId: number,
  lastBatchId: number,
): Promise<TFlowJoinTotals | null> {
  // Fixed keys of this module, as literals (a parameter after `->` is ambiguous between text and int).
  const summed = (json: ReturnType<typeof sql>, key: string) =>
    sql<number>`coalesce(sum((${json}->>${sql.lit(key)})::numeric) FILTER (WHERE jsonb_typeof(${json}->${sql.lit(key)}) = 'number'), 0)::float8`;
  const join = sql`b.progress->'join'`;
  const outcomes = sql`CASE WHEN jsonb_typeof(b.progress->'outcomes') = 'object' THEN b.progress->'outcomes' ELSE b.outcomes END`;
  const [row] = await rowsOf(
    db,
    tables
      .selectFrom("batch_log as b")
      .select([
        sql<number>`count(*)::int`.as("batches"),
        ...FLOW_JOIN_COUNTS.map((k) => summed(join, k).as(k)),
        summed(outcomes, "sink").as("sink"),
      ])
      .where("b.pipeline_version_id", "=", pipelineVersionId)
      .where("b.batch_id", ">=", sql<bigint>`${firstBatchId}::bigint`)
      .where("b.batch_id", "<=", sql<bigint>`${lastBatchId}::bigint`)
      .where(sql<boolean>`jsonb_typeof(b.progress->'join') = 'object'`),
  );
  if (!row || row.batches === 0) return null;
  const { batches: _batches, ...totals } = row;
  return totals;
}
