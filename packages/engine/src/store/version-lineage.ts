// A version and the versions whose checkpoint and tables it continued (continued_from_id): what a
// version has read and written includes its predecessors'. One CTE for every query that walks it
// (the offset log's first offsets, outcome totals, a rollout's reconciliation window).
/** `lineage(id, depth)`, newest first (depth 0 is the version itself); `$1` is the version's id. */
export const LINEAGE_SQL = `lineage(id, depth) AS (
      SELECT $1::text, 0
      UNION ALL
      SELECT v.continued_from_id, l.depth + 1 FROM lineage l JOIN pipeline_versions v ON v.id = l.id
       WHERE v.continued_from_id IS NOT NULL AND l.depth < 10000)`;
