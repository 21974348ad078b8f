// A version and the versions whose checkpoint and tables it continued (continued_from_id), newest
// first: what a version has read and written includes its predecessors'. `$1` is the version's id.
export const LINEAGE_SQL = `lineage(id, depth) AS (
      SELECT $1::text, 0
      UNION ALL
      SELECT v.continued_from_id, l.depth + 1 FROM lineage l JOIN pipeline_versions v ON v.id = l.id
       WHERE v.continued_from_id IS NOT NULL AND l.depth < 10000)`;

/** Where a version's lineage read its first batch: per partition, its first offset (none before a batch). */
export const FIRST_OFFSETS_SQL = `WITH RECURSIVE ${LINEAGE_SQL}
    SELECT o.ranges FROM lineage l JOIN offset_log o ON o.pipeline_version_id = l.id AND o.replay IS NULL
     ORDER BY l.depth DESC, o.batch_id ASC LIMIT 1`;

export type TFirstOffsetsRow = { ranges: { partition: number; from: number | string }[] };

export function firstOffsetsOf(rows: TFirstOffsetsRow[]): Record<string, number> | null {
  const first = rows[0];
  if (!first) return null;
  return Object.fromEntries(first.ranges.map((r) => [String(r.partition), Number(r.from)]));
}
