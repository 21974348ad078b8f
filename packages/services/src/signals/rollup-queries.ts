// The SQL behind every chart: rollup buckets (10-second, 60-second or 5-minute grain, the coarsest that
// divides the chart's step) re-binned with date_bin to the step, for one or many pipeline versions at once (the
// fleet asks for all of them in one query each). Every read is a range scan of a primary key that
// starts with (pipeline_version_id, grain_seconds, bucket_start).
import {
  expressionBuilder,
  rowsOf,
  sql,
  tables,
  type Expression,
  type NotNull,
  type Prisma,
  type PrismaClient,
  type Selectable,
  type TControlPlaneTables,
  type TRowOf,
} from "@sluice/db";
import { OUTCOMES, outcomeColumn, type OutcomeColumn } from "@sluice/engine";
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
    // Left raw: a setting, not a statement on a table, so there is nothing for the typed layer to check.
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

type TSegmentTable = "batch_rollup" | "partition_rollup" | "output_rollup" | "offset_samples";

/** The grain segments as the table `s(seg_grain, seg_from, seg_to)` (segmentArrays). */
function segmentsOf(segments: TGrainSegment[]) {
  const [grains, froms, tos] = segmentArrays(segments);
  return sql<{
    seg_grain: number;
    seg_from: string;
    seg_to: string;
  }>`unnest(${grains}::int[], ${froms}::text[], ${tos}::text[])`.as<"s">(sql`s(seg_grain, seg_from, seg_to)`);
}

/**
 * The rows of `table` in each segment, one index range scan per segment: the grain segments
 * CROSS JOIN LATERAL the scan, as `alias` (OFFSET 0: see segmentArrays).
 */
function segmentScan<T extends TSegmentTable, A extends string>(
  segments: TGrainSegment[],
  table: T,
  alias: A,
  versionIds: string[],
) {
  return tables.selectFrom(segmentsOf(segments)).crossJoinLateral((eb) =>
    eb
      .selectFrom(table as TSegmentTable)
      .selectAll(table as TSegmentTable)
      .where("pipeline_version_id", "=", sql<string>`ANY(${versionIds})`)
      .whereRef("grain_seconds", "=", "s.seg_grain")
      .where((eb) => eb("bucket_start", ">=", sql<Date>`${eb.ref("s.seg_from")}::timestamptz`))
      .where((eb) => eb("bucket_start", "<", sql<Date>`${eb.ref("s.seg_to")}::timestamptz`))
      .offset(sql.lit(0))
      .$castTo<Selectable<TControlPlaneTables[T]>>()
      .as(alias),
  );
}

/** The chart bucket a rollup bucket falls in: date_bin to the step. */
const chartBucket = (stepSeconds: number, bucketStart: Expression<Date>) =>
  sql<Date>`date_bin(${stepSeconds}::int * interval '1 second', ${bucketStart}, ${BUCKET_ORIGIN}::timestamptz)`;
const float8 = (e: Expression<unknown>) => sql<number>`${e}::float8`;
const int = (e: Expression<unknown>) => sql<number>`${e}::int`;
/** The value of the bucket's newest batch. */
const newest = <T>(e: Expression<T>, order: Expression<unknown>) =>
  sql<T>`(array_agg(${e} ORDER BY ${order} DESC))[1]`;
/** The newest known value, skipping batches that did not report it. */
const newestKnown = <T>(e: Expression<T>, order: Expression<unknown>) =>
  sql<T>`(array_agg(${e} ORDER BY ${order} DESC) FILTER (WHERE ${e} IS NOT NULL))[1]`;
type TSummed = keyof TControlPlaneTables["batch_rollup"] & string;
/** Each outcome's sum as float8, named by its column (outcomeColumn), in OUTCOMES' order. */
const outcomeSums = (sum: (c: TSummed) => Expression<unknown>) =>
  OUTCOMES.map((o) => float8(sum(outcomeColumn(o))).as(outcomeColumn(o)));
const ordinals = (n: number) => Array.from({ length: n }, (_, i) => sql.lit(i + 1));
/** `ORDER BY 1, …, n` as one expression (Kysely deprecated orderBy with an array). */
const byOrdinals = (n: number) => sql.join(ordinals(n));

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
  return withoutJit(db, (tx) =>
    rowsOf(
      tx,
      segmentScan(chartSegments(b), "batch_rollup", "batch_rollup", versionIds)
        .select((eb) => {
          const sum = (c: TSummed) => eb.fn.sum(eb.ref(`batch_rollup.${c}`));
          return [
            "batch_rollup.pipeline_version_id as pv",
            chartBucket(b.stepSeconds, eb.ref("batch_rollup.bucket_start")).as("t"),
            int(sum("batches")).as("batches"),
            float8(eb.fn.min("batch_rollup.first_batch_id")).as("first_batch_id"),
            float8(eb.fn.max("batch_rollup.last_batch_id")).as("last_batch_id"),
            eb.fn.max("batch_rollup.last_committed_at").as("last_committed_at"),
            float8(sum("input_rows")).as("input_rows"),
            ...outcomeSums(sum),
            int(sum("unbalanced")).as("unbalanced"),
            float8(sum("plan_ms")).as("plan_ms"),
            float8(sum("read_ms")).as("read_ms"),
            float8(sum("process_ms")).as("process_ms"),
            float8(sum("commit_ms")).as("commit_ms"),
            float8(sum("total_ms")).as("total_ms"),
            eb.fn.max("batch_rollup.latency_p50").as("latency_p50"),
            eb.fn.max("batch_rollup.latency_p95").as("latency_p95"),
            eb.fn.max("batch_rollup.latency_p99").as("latency_p99"),
            float8(newest(eb.ref("batch_rollup.state_rows"), eb.ref("batch_rollup.last_batch_id"))).as(
              "state_rows",
            ),
            float8(newest(eb.ref("batch_rollup.state_bytes"), eb.ref("batch_rollup.last_batch_id"))).as(
              "state_bytes",
            ),
            newest(eb.ref("batch_rollup.watermark"), eb.ref("batch_rollup.last_batch_id")).as("watermark"),
            newest(eb.ref("batch_rollup.event_time_max"), eb.ref("batch_rollup.last_batch_id")).as(
              "event_time_max",
            ),
            eb.fn.max("batch_rollup.ingest_time_max").as("ingest_time_max"),
          ];
        })
        .groupBy(ordinals(2))
        .orderBy(byOrdinals(2)),
    ),
  );
}

/** Only the rows committed per bucket: what the fleet's sparklines need (a fraction of the columns to ship). */
export async function queryProcessedBuckets(
  db: PrismaClient,
  versionIds: string[],
  b: TBucketing,
): Promise<{ pv: string; t: Date; input_rows: number }[]> {
  if (versionIds.length === 0) return [];
  return withoutJit(db, (tx) =>
    rowsOf(
      tx,
      segmentScan(chartSegments(b), "batch_rollup", "batch_rollup", versionIds)
        .select((eb) => [
          "batch_rollup.pipeline_version_id as pv",
          chartBucket(b.stepSeconds, eb.ref("batch_rollup.bucket_start")).as("t"),
          float8(eb.fn.sum("batch_rollup.input_rows")).as("input_rows"),
        ])
        .groupBy(ordinals(2))
        .orderBy(byOrdinals(2)),
    ),
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
  const perName = segmentScan(chartSegments(b), "batch_rollup", "r", versionIds)
    .crossJoinLateral((eb) =>
      sql<{ key: string; value: string }>`jsonb_each_text(${eb.ref("r.violations")})`.as("e"),
    )
    .select((eb) => [
      "r.pipeline_version_id as pv",
      chartBucket(b.stepSeconds, eb.ref("r.bucket_start")).as("t"),
      "e.key as name",
      float8(eb.fn.sum(sql<number>`${eb.ref("e.value")}::numeric`)).as("n"),
    ])
    .groupBy(ordinals(3))
    .as("x");
  const rows = await withoutJit(db, (tx) =>
    rowsOf(
      tx,
      tables
        .selectFrom(perName)
        .select([
          "x.pv",
          "x.t",
          sql<Record<string, number>>`jsonb_object_agg(${sql.ref("x.name")}, ${sql.ref("x.n")})`.as("m"),
        ])
        .groupBy(ordinals(2))
        .orderBy(byOrdinals(2)),
    ),
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
  return withoutJit(db, (tx) =>
    rowsOf(
      tx,
      segmentScan(chartSegments(b), "partition_rollup", "partition_rollup", versionIds)
        .select((eb) => {
          const last = eb.ref("partition_rollup.last_batch_id");
          return [
            "partition_rollup.pipeline_version_id as pv",
            chartBucket(b.stepSeconds, eb.ref("partition_rollup.bucket_start")).as("t"),
            "partition_rollup.partition",
            float8(eb.fn.sum("partition_rollup.rows_read")).as("rows_read"),
            eb.fn.max("partition_rollup.last_committed_at").as("last_committed_at"),
            // The newest known value, as the trigger keeps it inside one bucket (a batch that did not
            // report the partition's clock leaves it), so a bucket reads the same from every grain.
            newestKnown(eb.ref("partition_rollup.event_time_max"), last).as("event_time_max"),
            newestKnown(eb.ref("partition_rollup.last_data_at"), last).as("last_data_at"),
            newestKnown(eb.ref("partition_rollup.idle"), last).as("idle"),
          ];
        })
        .groupBy(ordinals(3))
        .orderBy(byOrdinals(3)),
    ),
  );
}

export interface TOutputBucketRow {
  pv: string;
  t: Date;
  output: string;
  batches: number;
  last_committed_at: Date;
  rows: number;
  sink: number;
  late: number;
  late_accepted: number;
  state_rows: number;
  state_bytes: number;
  watermark: Date | null;
}

/** Per output of a pipeline with several outputs (or a join): its rows, late rows, state and watermark per bucket. */
export async function queryOutputBuckets(
  db: PrismaClient,
  versionIds: string[],
  b: TBucketing,
): Promise<TOutputBucketRow[]> {
  if (versionIds.length === 0) return [];
  return withoutJit(db, (tx) =>
    rowsOf(
      tx,
      segmentScan(chartSegments(b), "output_rollup", "o", versionIds)
        .select((eb) => {
          const last = eb.ref("o.last_batch_id");
          return [
            "o.pipeline_version_id as pv",
            chartBucket(b.stepSeconds, eb.ref("o.bucket_start")).as("t"),
            "o.output",
            int(eb.fn.sum("o.batches")).as("batches"),
            eb.fn.max("o.last_committed_at").as("last_committed_at"),
            float8(eb.fn.sum("o.rows")).as("rows"),
            float8(eb.fn.sum("o.sink")).as("sink"),
            float8(eb.fn.sum("o.late")).as("late"),
            float8(eb.fn.sum("o.late_accepted")).as("late_accepted"),
            float8(newest(eb.ref("o.state_rows"), last)).as("state_rows"),
            float8(newest(eb.ref("o.state_bytes"), last)).as("state_bytes"),
            newest(eb.ref("o.watermark"), last).as("watermark"),
          ];
        })
        .groupBy(ordinals(3))
        .orderBy(byOrdinals(3)),
    ),
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
 * from; from one step before the range, so the first bucket's input rate has a sample to be measured from.
 * DISTINCT ON rather than array_agg(… ORDER BY) per column: a third less time in Postgres.
 */
function lastSamplePerBucket(versionIds: string[], b: TBucketing) {
  const segments = chartSegments(b, new Date(b.from.getTime() - b.stepSeconds * 1000));
  return segmentScan(segments, "offset_samples", "offset_samples", versionIds)
    .distinctOn(ordinals(3))
    .select((eb) => [
      "offset_samples.pipeline_version_id as pv",
      chartBucket(b.stepSeconds, eb.ref("offset_samples.bucket_start")).as("t"),
      "offset_samples.partition",
      "offset_samples.sampled_at",
      "offset_samples.latest_offset",
      "offset_samples.committed_offset",
    ])
    .orderBy(byOrdinals(3))
    .orderBy("offset_samples.sampled_at", "desc");
}

/** The last offset sample per partition and bucket (the pipeline page's per-partition backlog and its input rate). */
export async function queryOffsetBuckets(
  db: PrismaClient,
  versionIds: string[],
  b: TBucketing,
): Promise<TOffsetBucketRow[]> {
  if (versionIds.length === 0) return [];
  return withoutJit(db, (tx) =>
    rowsOf(
      tx,
      tables
        .selectFrom(lastSamplePerBucket(versionIds, b).as("s"))
        .select((eb) => [
          "s.pv",
          "s.t",
          "s.partition",
          "s.sampled_at",
          float8(eb.ref("s.latest_offset")).as("latest_offset"),
          sql<number | null>`${eb.ref("s.committed_offset")}::float8`.as("committed_offset"),
        ])
        .orderBy(byOrdinals(3)),
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
    rowsOf(
      tx,
      tables
        .with("paired", (db) =>
          db
            .selectFrom(lastSamplePerBucket(versionIds, b).as("s"))
            .selectAll("s")
            .select((eb) => [
              eb.fn
                .agg<bigint>("lag", ["s.latest_offset"])
                .over((w) => w.partitionBy(["s.pv", "s.partition"]).orderBy("s.t"))
                .as("prev_offset"),
              eb.fn
                .agg<Date>("lag", ["s.sampled_at"])
                .over((w) => w.partitionBy(["s.pv", "s.partition"]).orderBy("s.t"))
                .as("prev_at"),
            ]),
        )
        .selectFrom("paired")
        .select((eb) => {
          const latest = eb.ref("paired.latest_offset");
          const sampledAt = eb.ref("paired.sampled_at");
          const prevAt = eb.ref("paired.prev_at");
          return [
            "paired.pv",
            "paired.t",
            sql<
              number | null
            >`(sum(greatest(0, ${latest} - ${eb.ref("paired.prev_offset")}) / extract(epoch FROM ${sampledAt} - ${prevAt})) FILTER (WHERE ${sampledAt} > ${prevAt}))::float8`.as(
              "input_rate",
            ),
            float8(
              eb.fn.sum(sql`greatest(0, ${latest} - coalesce(${eb.ref("paired.committed_offset")}, 0))`),
            ).as("backlog"),
          ];
        })
        .groupBy(ordinals(2))
        .orderBy(byOrdinals(2)),
    ),
  );
}

/** Per outcome its sum over the range (its column: outcomeColumn). */
export interface TRangeTotalsRow extends Record<OutcomeColumn, number> {
  pv: string;
  batches: number;
  /** The range's batches are first_batch_id..last_batch_id (batch ids follow commit time). */
  first_batch_id: number;
  last_batch_id: number;
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
  const ranged = segmentScan(segments, "batch_rollup", "b", versionIds).selectAll("b");
  // Subqueries of the statement below, over its CTE `r`.
  const eb = expressionBuilder<TControlPlaneTables & { r: TRowOf<typeof ranged> }, never>();
  const totals = eb
    .selectFrom("r")
    .select((eb) => {
      const sum = (c: TSummed) => eb.fn.sum(`r.${c}`);
      return [
        "r.pipeline_version_id as pv",
        int(sum("batches")).as("batches"),
        float8(eb.fn.min("r.first_batch_id")).as("first_batch_id"),
        float8(eb.fn.max("r.last_batch_id")).as("last_batch_id"),
        float8(sum("input_rows")).as("input_rows"),
        ...outcomeSums(sum),
        int(sum("unbalanced")).as("unbalanced"),
      ];
    })
    .groupBy(ordinals(1))
    .as("t");
  const perExpectation = <A extends string>(column: "violations" | "dropped_by", alias: A) =>
    eb
      .selectFrom(
        eb
          .selectFrom([
            "r",
            sql<{ key: string; value: string }>`jsonb_each_text(${sql.ref(`r.${column}`)})`.as("e"),
          ])
          .select((eb) => [
            "r.pipeline_version_id as pv",
            "e.key as k",
            float8(eb.fn.sum(sql<number>`${eb.ref("e.value")}::numeric`)).as("n"),
          ])
          .groupBy(ordinals(2))
          .as("x"),
      )
      .select((eb) => [
        "x.pv",
        sql<Record<string, number>>`jsonb_object_agg(${eb.ref("x.k")}, ${eb.ref("x.n")})`.as("m"),
      ])
      .groupBy("x.pv")
      .as(alias);
  return withoutJit(db, (tx) =>
    rowsOf(
      tx,
      tables
        .with("r", () => ranged)
        .selectFrom(totals)
        .leftJoin(perExpectation("violations", "v"), (join) => join.onRef("v.pv", "=", "t.pv"))
        .leftJoin(perExpectation("dropped_by", "d"), (join) => join.onRef("d.pv", "=", "t.pv"))
        .selectAll("t")
        .select((eb) => [
          eb.fn.coalesce("v.m", sql<Record<string, number>>`'{}'`).as("violations"),
          eb.fn.coalesce("d.m", sql<Record<string, number>>`'{}'`).as("dropped_by"),
        ]),
    ),
  );
}

/** The newest committed Kafka append time per version (its ingest-time freshness). */
export async function queryNewestIngest(
  db: PrismaClient,
  versionIds: string[],
): Promise<{ pv: string; ingest_time_max: Date; last_committed_at: Date }[]> {
  if (versionIds.length === 0) return [];
  // One index probe per version (newest bucket first), not a scan of its history.
  return withoutJit(db, (tx) =>
    rowsOf(
      tx,
      tables
        .selectFrom(sql<{ id: string }>`unnest(${versionIds}::text[])`.as<"v">(sql`v(id)`))
        .crossJoinLateral((eb) =>
          eb
            .selectFrom("batch_rollup")
            .select(["ingest_time_max", "last_committed_at"])
            .whereRef("pipeline_version_id", "=", "v.id")
            .where("grain_seconds", "=", COARSE_GRAIN_SECONDS)
            .where("ingest_time_max", "is not", null)
            .orderBy("bucket_start", "desc")
            .limit(sql.lit(1))
            .$narrowType<{ ingest_time_max: NotNull }>()
            .as("r"),
        )
        .select(["v.id as pv", "r.ingest_time_max", "r.last_committed_at"]),
    ),
  );
}

/** The newest offset sample per version and partition, if one was taken since `since`. */
export async function queryLatestOffsets(
  db: PrismaClient,
  versionIds: string[],
  since: Date,
): Promise<TOffsetBucketRow[]> {
  if (versionIds.length === 0) return [];
  return withoutJit(db, (tx) =>
    rowsOf(
      tx,
      tables
        .selectFrom("offset_samples")
        .distinctOn(["pipeline_version_id", "partition"])
        .select((eb) => [
          "pipeline_version_id as pv",
          "bucket_start as t",
          "partition",
          "sampled_at",
          float8(eb.ref("latest_offset")).as("latest_offset"),
          sql<number | null>`${eb.ref("committed_offset")}::float8`.as("committed_offset"),
        ])
        .where("pipeline_version_id", "=", sql<string>`ANY(${versionIds})`)
        .where("grain_seconds", "=", GRAIN_SECONDS)
        .where("bucket_start", ">=", since)
        .orderBy("pipeline_version_id")
        .orderBy("partition")
        .orderBy("bucket_start", "desc"),
    ),
  );
}
