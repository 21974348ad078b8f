// Where a rollout's reconciliation starts, so neither side is blamed for input it never read. Blue
// started where its lineage read its first batch, green where the rollout started it (earliest, a
// point in time, or blue's own start — clamped to what retention kept). Per partition the comparison
// starts at the later of the two (`offsets`: ledgers and CDC tables are compared from there).
//
// Windows are compared by event time, so the later start is also turned into an event time: every
// event the earlier side read below the common offsets is at or before that side's highest event time
// on that partition through those batches (the progress records' per-partition clocks), so windows
// starting after it hold only events both sides read. A batch straddling the common offset counts
// whole: the start is somewhat later than it could be, never earlier. Green started from a point in
// time: not before that time either.
import type pg from "pg";
import type { TReconcileInput } from "./reconciliation-report";
import { firstLineageOffsets, LINEAGE_SQL } from "@sluice/engine";

export interface TRolloutStart {
  blueVersionId: string;
  greenVersionId: string;
  /** rollouts.starting_from: { kind, at?, offsets } as startRollout recorded it. */
  startingFrom: unknown;
}

export async function reconciliationFrom(
  pool: pg.Pool,
  r: TRolloutStart,
): Promise<NonNullable<TReconcileInput["from"]>> {
  const from = (r.startingFrom ?? {}) as { kind?: string; at?: string; offsets?: Record<string, number> };
  const blueStart = (await firstLineageOffsets(pool, r.blueVersionId)) ?? {};
  const greenStart = Object.fromEntries(Object.entries(from.offsets ?? {}).map(([p, o]) => [p, Number(o)]));
  const offsets: Record<string, number> = {};
  for (const p of new Set([...Object.keys(blueStart), ...Object.keys(greenStart)]))
    offsets[p] = Math.max(blueStart[p] ?? 0, greenStart[p] ?? 0);

  const times: number[] = [];
  if (from.kind === "timestamp" && from.at) times.push(new Date(from.at).getTime());
  for (const [version, start] of [
    [r.blueVersionId, blueStart],
    [r.greenVersionId, greenStart],
  ] as const) {
    const unshared = Object.fromEntries(Object.entries(offsets).filter(([p, o]) => (start[p] ?? 0) < o));
    if (Object.keys(unshared).length === 0) continue;
    const seen = await highestEventTimeBelow(pool, version, unshared);
    if (seen) times.push(seen.getTime() + 1);
  }
  return times.length > 0 ? { offsets, eventTime: new Date(Math.max(...times)) } : { offsets };
}

/**
 * The highest event time a version's lineage had seen on each partition in the batches that read below
 * `below` there (per partition: the partition's own clock in the progress record, else the batch's).
 */
async function highestEventTimeBelow(
  pool: pg.Pool,
  pipelineVersionId: string,
  below: Record<string, number>,
): Promise<Date | null> {
  const res = await pool.query<{ t: Date | null }>(
    `WITH RECURSIVE ${LINEAGE_SQL}
     SELECT max(coalesce(
              (SELECT (pe ->> 'eventTimeMax')::timestamptz FROM jsonb_array_elements(b.progress -> 'partitionEventTime') pe
                WHERE pe ->> 'partition' = s ->> 'partition'),
              (b.progress ->> 'eventTimeMax')::timestamptz)) AS t
       FROM batch_log b JOIN lineage l ON b.pipeline_version_id = l.id
      CROSS JOIN LATERAL jsonb_array_elements(b.progress -> 'sources') s
      WHERE (s ->> 'endOffset')::bigint > (s ->> 'startOffset')::bigint
        AND (s ->> 'startOffset')::bigint < coalesce(($2::jsonb ->> (s ->> 'partition'))::bigint, -1)`,
    [pipelineVersionId, JSON.stringify(below)],
  );
  return res.rows[0]?.t ?? null;
}
