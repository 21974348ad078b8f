// The SQL behind every chart: rollup buckets (10-second, 60-second or 5-minute grain, the coarsest that
// divides the chart's step) re-binned with date_bin to the step, for one or many pipeline versions at once (the
// fleet asks for all of them in one query each). Every read is a range scan of a primary key that
// starts with (pipeline_version_id, grain_seconds, bucket_start).
import type { Prisma, PrismaClient } from "@sluice/db";
import type { OutcomeColumn } from "@sluice/engine";
import {
  BUCKET_ORIGIN,
  chartSegments,
  COARSE_GRAIN_SECONDS,
  GRAIN_SECONDS,
  splitByGrain,
  type TBucketing,
  type TGrainSegment,
} from "./time-range";

/**
 * Runs one dashboard query with JIT compilation off. The planner's row estimates for these range scans
 * over `pipeline_version_id = ANY(…)` are far above the few thousand rows they read, which makes it
 * JIT-compile them: measured 300–700 ms of compilation for queries that execute in tens of ms
 * (docs/performance.md). SET LOCAL keeps the setting inside this one transaction.
 */
function withoutJit<T>(db: PrismaClient, query: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SET LOCAL jit = off`;
    return query(tx);
  });
}

/**
 * Grain segments as three parallel arrays for `unnest(grains::int[], froms::text[], tos::text[])`, each
 * joined LATERAL to one index range scan of a primary key (pipeline_version_id, grain_seconds,
 * bucket_start, …). `OFFSET 0` keeps the subquery from being flattened into a plain join, which the
 * planner turned into a sequential scan of the whole table and a hash join (143 ms instead of <1 ms for
 * an hour's totals, docs/performance.md).
 */
function segmentArrays(segments: TGrainSegment[]): [number[], string[], string[]] {
  return [
    segments.map((g) => g.grain),
    segments.map((g) => g.from.toISOString()),
    segments.map((g) => g.to.toISOString()),
  ];
}

/** Per outcome its sum over the bucket (its column: outcomeColumn). */
export interface TBatchBucketRow extends Record<OutcomeColumn, number> {
  pv: string;
  t: Date;
  batches: number;
  first_batch_id: number;
  last_batch_id: number;
  last_committed_at: Date;
  input_rows: number;
  unbalanced: number;
  plan_ms: number;
  read_ms: number;
  process_ms: number;
  commit_ms: number;
  total_ms: number;
  latency_p50: number | null;
  latency_p95: number | null;
  latency_p99: number | null;
  state_rows: number;
  state_bytes: number;
  watermark: Date | null;
  event_time_max: Date | null;
  ingest_time_max: Date | null;
}

export async function queryBatchBuckets(
  db: PrismaClient,
  versionIds: string[],
  b: TBucketing,
): Promise<TBatchBucketRow[]> {
  if (versionIds.length === 0) return [];
  const [grains, froms, tos] = segmentArrays(chartSegments(b));
  return withoutJit(
    db,
    (tx) => tx.$queryRaw<TBatchBucketRow[]>`
    SELECT pipeline_version_id AS pv, date_bin(${b.stepSeconds}::int * interval '1 second', bucket_start, ${BUCKET_ORIGIN}::timestamptz) AS t,
           sum(batches)::int AS batches, min(first_batch_id)::float8 AS first_batch_id, max(last_batch_id)::float8 AS last_batch_id,
           max(last_committed_at) AS last_committed_at,
           sum(input_rows)::float8 AS input_rows, sum(sink)::float8 AS sink, sum(duplicate)::float8 AS duplicate, sum(filtered)::float8 AS filtered,
           sum(quarantined)::float8 AS quarantined, sum(dead_letter)::float8 AS dead_letter, sum(late)::float8 AS late, sum(stale)::float8 AS stale,
           sum(dropped)::float8 AS dropped, sum(unbalanced)::int AS unbalanced,
           sum(plan_ms)::float8 AS plan_ms, sum(read_ms)::float8 AS read_ms, sum(process_ms)::float8 AS process_ms,
           sum(commit_ms)::float8 AS commit_ms, sum(total_ms)::float8 AS total_ms,
           max(latency_p50) AS latency_p50, max(latency_p95) AS latency_p95, max(latency_p99) AS latency_p99,
           (array_agg(state_rows ORDER BY last_batch_id DESC))[1]::float8 AS state_rows,
           (array_agg(state_bytes ORDER BY last_batch_id DESC))[1]::float8 AS state_bytes,
           (array_agg(watermark ORDER BY last_batch_id DESC))[1] AS watermark,
           (array_agg(event_time_max ORDER BY last_batch_id DESC))[1] AS event_time_max,
           max(ingest_time_max) AS ingest_time_max
      FROM unnest(${grains}::int[], ${froms}::text[], ${tos}::text[]) AS s(seg_grain, seg_from, seg_to)
      CROSS JOIN LATERAL (SELECT * FROM batch_rollup WHERE pipeline_version_id = ANY(${versionIds}) AND grain_seconds = s.seg_grain
                            AND bucket_start >= s.seg_from::timestamptz AND bucket_start < s.seg_to::timestamptz OFFSET 0) batch_rollup
     GROUP BY 1, 2 ORDER BY 1, 2`,
  );
}

/** Only the rows committed per bucket: what the fleet's sparklines need (a fraction of the columns to ship). */
export async function queryProcessedBuckets(
  db: PrismaClient,
  versionIds: string[],
  b: TBucketing,
): Promise<{ pv: string; t: Date; input_rows: number }[]> {
  if (versionIds.length === 0) return [];
  const [grains, froms, tos] = segmentArrays(chartSegments(b));
  return withoutJit(
    db,
    (tx) => tx.$queryRaw`
    SELECT pipeline_version_id AS pv, date_bin(${b.stepSeconds}::int * interval '1 second', bucket_start, ${BUCKET_ORIGIN}::timestamptz) AS t,
           sum(input_rows)::float8 AS input_rows
      FROM unnest(${grains}::int[], ${froms}::text[], ${tos}::text[]) AS s(seg_grain, seg_from, seg_to)
      CROSS JOIN LATERAL (SELECT * FROM batch_rollup WHERE pipeline_version_id = ANY(${versionIds}) AND grain_seconds = s.seg_grain
                            AND bucket_start >= s.seg_from::timestamptz AND bucket_start < s.seg_to::timestamptz OFFSET 0) batch_rollup
     GROUP BY 1, 2 ORDER BY 1, 2`,
  );
}

export interface TCountBucketRow {
  pv: string;
  t: Date;
  name: string;
  n: number;
}

/**
 * Violations (warn and drop) per expectation name and bucket, ordered by version, bucket and name.
 * Shipped as one map per bucket and expanded here: node's cost is per returned row (docs/performance.md),
 * and a row per expectation and bucket is four times the rows for four expectations.
 */
export async function queryExpectationBuckets(
  db: PrismaClient,
  versionIds: string[],
  b: TBucketing,
): Promise<TCountBucketRow[]> {
  if (versionIds.length === 0) return [];
  const [grains, froms, tos] = segmentArrays(chartSegments(b));
  const rows = await withoutJit(
    db,
    (tx) => tx.$queryRaw<{ pv: string; t: Date; m: Record<string, number> }[]>`
    SELECT pv, t, jsonb_object_agg(name, n) AS m FROM (
      SELECT r.pipeline_version_id AS pv, date_bin(${b.stepSeconds}::int * interval '1 second', r.bucket_start, ${BUCKET_ORIGIN}::timestamptz) AS t,
             e.key AS name, sum(e.value::numeric)::float8 AS n
        FROM unnest(${grains}::int[], ${froms}::text[], ${tos}::text[]) AS s(seg_grain, seg_from, seg_to)
        CROSS JOIN LATERAL (SELECT * FROM batch_rollup WHERE pipeline_version_id = ANY(${versionIds}) AND grain_seconds = s.seg_grain
                              AND bucket_start >= s.seg_from::timestamptz AND bucket_start < s.seg_to::timestamptz OFFSET 0) r
        CROSS JOIN LATERAL jsonb_each_text(r.violations) e
       GROUP BY 1, 2, 3) x
     GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  return rows.flatMap((r) =>
    Object.keys(r.m)
      .sort()
      .map((name) => ({ pv: r.pv, t: r.t, name, n: Number(r.m[name]) })),
  );
}

export interface TPartitionBucketRow {
  pv: string;
  t: Date;
  partition: number;
  rows_read: number;
  last_committed_at: Date;
  event_time_max: Date | null;
  last_data_at: Date | null;
  idle: boolean | null;
}

export async function queryPartitionBuckets(
  db: PrismaClient,
  versionIds: string[],
  b: TBucketing,
): Promise<TPartitionBucketRow[]> {
  if (versionIds.length === 0) return [];
  const [grains, froms, tos] = segmentArrays(chartSegments(b));
  return withoutJit(
    db,
    (tx) => tx.$queryRaw<TPartitionBucketRow[]>`
    SELECT pipeline_version_id AS pv, date_bin(${b.stepSeconds}::int * interval '1 second', bucket_start, ${BUCKET_ORIGIN}::timestamptz) AS t, partition,
           sum(rows_read)::float8 AS rows_read, max(last_committed_at) AS last_committed_at,
           -- The newest known value, as the trigger keeps it inside one bucket (a batch that did not
           -- report the partition's clock leaves it), so a bucket reads the same from every grain.
           (array_agg(event_time_max ORDER BY last_batch_id DESC) FILTER (WHERE event_time_max IS NOT NULL))[1] AS event_time_max,
           (array_agg(last_data_at ORDER BY last_batch_id DESC) FILTER (WHERE last_data_at IS NOT NULL))[1] AS last_data_at,
           (array_agg(idle ORDER BY last_batch_id DESC) FILTER (WHERE idle IS NOT NULL))[1] AS idle
      FROM unnest(${grains}::int[], ${froms}::text[], ${tos}::text[]) AS s(seg_grain, seg_from, seg_to)
      CROSS JOIN LATERAL (SELECT * FROM partition_rollup WHERE pipeline_version_id = ANY(${versionIds}) AND grain_seconds = s.seg_grain
                            AND bucket_start >= s.seg_from::timestamptz AND bucket_start < s.seg_to::timestamptz OFFSET 0) partition_rollup
     GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
  );
}

export interface TOffsetBucketRow {
  pv: string;
  t: Date;
  partition: number;
  sampled_at: Date;
  latest_offset: number;
  committed_offset: number | null;
}

/**
 * The last offset sample per version, bucket and partition: the statement both offset queries start
 * from. Parameters: $1 version ids, $2 step seconds, $3 bucket origin, $4–$6 the grain segments
 * (segmentArrays).
 * DISTINCT ON rather than array_agg(… ORDER BY) per column: a third less time in Postgres.
 */
const LAST_SAMPLE_PER_BUCKET = `
  SELECT DISTINCT ON (1, 2, 3) pipeline_version_id AS pv, date_bin($2::int * interval '1 second', bucket_start, $3::timestamptz) AS t, partition,
         sampled_at, latest_offset, committed_offset
    FROM unnest($4::int[], $5::text[], $6::text[]) AS s(seg_grain, seg_from, seg_to)
    CROSS JOIN LATERAL (SELECT * FROM offset_samples WHERE pipeline_version_id = ANY($1::text[]) AND grain_seconds = s.seg_grain
                          AND bucket_start >= s.seg_from::timestamptz AND bucket_start < s.seg_to::timestamptz OFFSET 0) offset_samples
   ORDER BY 1, 2, 3, sampled_at DESC`;

/** The bind parameters of LAST_SAMPLE_PER_BUCKET; from one step before the range, so the first bucket's input rate has a sample to be measured from. */
const lastSampleParams = (versionIds: string[], b: TBucketing) => [
  versionIds,
  b.stepSeconds,
  BUCKET_ORIGIN,
  ...segmentArrays(chartSegments(b, new Date(b.from.getTime() - b.stepSeconds * 1000))),
];

/** The last offset sample per partition and bucket (the pipeline page's per-partition backlog and its input rate). */
export async function queryOffsetBuckets(
  db: PrismaClient,
  versionIds: string[],
  b: TBucketing,
): Promise<TOffsetBucketRow[]> {
  if (versionIds.length === 0) return [];
  return withoutJit(db, (tx) =>
    tx.$queryRawUnsafe<TOffsetBucketRow[]>(
      `SELECT pv, t, partition, sampled_at, latest_offset::float8 AS latest_offset, committed_offset::float8 AS committed_offset FROM (${LAST_SAMPLE_PER_BUCKET}) s ORDER BY 1, 2, 3`,
      ...lastSampleParams(versionIds, b),
    ),
  );
}

export interface TOffsetPointRow {
  pv: string;
  t: Date;
  /** Events/s appended to the topic since each partition's previous sample, summed; null when no partition has one. */
  input_rate: number | null;
  /** Sum over partitions of latest − committed at the bucket's last sample. */
  backlog: number;
}

/**
 * Input rate and backlog per version and bucket, summed over partitions in SQL: what offsetPoints
 * (offset-signals.ts) computes from queryOffsetBuckets, without shipping a row per partition — the
 * fleet needs only the totals (a third of the rows for 3 partitions; node's cost per row dominates).
 * The same samples give the same numbers (time-series.int.test.ts compares them).
 */
export async function queryOffsetPoints(
  db: PrismaClient,
  versionIds: string[],
  b: TBucketing,
): Promise<TOffsetPointRow[]> {
  if (versionIds.length === 0) return [];
  return withoutJit(db, (tx) =>
    tx.$queryRawUnsafe<TOffsetPointRow[]>(
      `WITH paired AS (
         SELECT *, lag(latest_offset) OVER w AS prev_offset, lag(sampled_at) OVER w AS prev_at
           FROM (${LAST_SAMPLE_PER_BUCKET}) s WINDOW w AS (PARTITION BY pv, partition ORDER BY t))
       SELECT pv, t,
              (sum(greatest(0, latest_offset - prev_offset) / extract(epoch FROM sampled_at - prev_at)) FILTER (WHERE sampled_at > prev_at))::float8 AS input_rate,
              sum(greatest(0, latest_offset - coalesce(committed_offset, 0)))::float8 AS backlog
         FROM paired GROUP BY 1, 2 ORDER BY 1, 2`,
      ...lastSampleParams(versionIds, b),
    ),
  );
}

/** Per outcome its sum over the range (its column: outcomeColumn). */
export interface TRangeTotalsRow extends Record<OutcomeColumn, number> {
  pv: string;
  batches: number;
  input_rows: number;
  unbalanced: number;
  violations: Record<string, number>;
  dropped_by: Record<string, number>;
}

/** Sums over [from, to) per version, with violations and drops per expectation (each part of the range from the coarsest grain that fits it). */
export async function queryRangeTotals(
  db: PrismaClient,
  versionIds: string[],
  from: Date,
  to: Date,
): Promise<TRangeTotalsRow[]> {
  if (versionIds.length === 0) return [];
  const segments = splitByGrain(from, to);
  if (segments.length === 0) return [];
  // At most five segments (5 minutes inside, minutes and 10 s at each edge).
  const [grains, froms, tos] = segmentArrays(segments);
  return withoutJit(
    db,
    (tx) => tx.$queryRaw<TRangeTotalsRow[]>`
    WITH r AS (SELECT b.* FROM unnest(${grains}::int[], ${froms}::text[], ${tos}::text[]) AS s(seg_grain, seg_from, seg_to)
                 CROSS JOIN LATERAL (SELECT * FROM batch_rollup WHERE pipeline_version_id = ANY(${versionIds}) AND grain_seconds = s.seg_grain
                                       AND bucket_start >= s.seg_from::timestamptz AND bucket_start < s.seg_to::timestamptz OFFSET 0) b)
    SELECT t.*, coalesce(v.m, '{}') AS violations, coalesce(d.m, '{}') AS dropped_by FROM (
      SELECT pipeline_version_id AS pv, sum(batches)::int AS batches, sum(input_rows)::float8 AS input_rows, sum(sink)::float8 AS sink,
             sum(duplicate)::float8 AS duplicate, sum(filtered)::float8 AS filtered, sum(quarantined)::float8 AS quarantined,
             sum(dead_letter)::float8 AS dead_letter, sum(late)::float8 AS late, sum(stale)::float8 AS stale, sum(dropped)::float8 AS dropped,
             sum(unbalanced)::int AS unbalanced
        FROM r GROUP BY 1) t
    LEFT JOIN (SELECT pv, jsonb_object_agg(k, n) AS m FROM (SELECT r.pipeline_version_id AS pv, e.key AS k, sum(e.value::numeric)::float8 AS n FROM r, jsonb_each_text(r.violations) e GROUP BY 1, 2) x GROUP BY pv) v ON v.pv = t.pv
    LEFT JOIN (SELECT pv, jsonb_object_agg(k, n) AS m FROM (SELECT r.pipeline_version_id AS pv, e.key AS k, sum(e.value::numeric)::float8 AS n FROM r, jsonb_each_text(r.dropped_by) e GROUP BY 1, 2) x GROUP BY pv) d ON d.pv = t.pv`,
  );
}

/** The newest committed Kafka append time per version (its ingest-time freshness). */
export async function queryNewestIngest(
  db: PrismaClient,
  versionIds: string[],
): Promise<{ pv: string; ingest_time_max: Date; last_committed_at: Date }[]> {
  if (versionIds.length === 0) return [];
  // One index probe per version (newest bucket first), not a scan of its history.
  return withoutJit(
    db,
    (tx) => tx.$queryRaw`
    SELECT v.id AS pv, r.ingest_time_max, r.last_committed_at FROM unnest(${versionIds}::text[]) AS v(id)
    CROSS JOIN LATERAL (SELECT ingest_time_max, last_committed_at FROM batch_rollup
                         WHERE pipeline_version_id = v.id AND grain_seconds = ${COARSE_GRAIN_SECONDS} AND ingest_time_max IS NOT NULL ORDER BY bucket_start DESC LIMIT 1) r`,
  );
}

/** The newest offset sample per version and partition, if one was taken since `since`. */
export async function queryLatestOffsets(
  db: PrismaClient,
  versionIds: string[],
  since: Date,
): Promise<TOffsetBucketRow[]> {
  if (versionIds.length === 0) return [];
  return withoutJit(
    db,
    (tx) => tx.$queryRaw<TOffsetBucketRow[]>`
    SELECT DISTINCT ON (pipeline_version_id, partition) pipeline_version_id AS pv, bucket_start AS t, partition, sampled_at,
           latest_offset::float8 AS latest_offset, committed_offset::float8 AS committed_offset
      FROM offset_samples WHERE pipeline_version_id = ANY(${versionIds}) AND grain_seconds = ${GRAIN_SECONDS} AND bucket_start >= ${since}
     ORDER BY pipeline_version_id, partition, bucket_start DESC`,
  );
}
