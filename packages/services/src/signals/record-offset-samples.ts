// The workers' offset sampler writes here: per pipeline version and partition, the topic's log end and
// the version's committed offset, one row per 10-second bucket and one per minute (the first sample in a
// bucket wins, so several workers sampling at once write each bucket once), and one per 5 minutes that
// holds the newest minute's sample (see below). Old samples are pruned.
import { countOf, sql, tables, type PrismaClient } from "@sluice/db";
import { BUCKET_ORIGIN, COARSE_GRAIN_SECONDS, FIVE_MINUTE_GRAIN_SECONDS, GRAIN_SECONDS } from "./time-range";

export interface TOffsetSampleInput {
  pipelineVersionId: string;
  partition: number;
  latestOffset: number;
  committedOffset: number | null;
}

/** Samples are kept this long (charts reach back 7 days; a custom range up to 31). */
export const OFFSET_SAMPLE_RETENTION_MS = 32 * 24 * 3600_000;

export async function recordOffsetSamples(
  db: PrismaClient,
  samples: TOffsetSampleInput[],
  sampledAt = new Date(),
): Promise<number> {
  if (samples.length === 0) return 0;
  const bucketOf = (grain: number) =>
    new Date(
      BUCKET_ORIGIN.getTime() +
        Math.floor((sampledAt.getTime() - BUCKET_ORIGIN.getTime()) / (grain * 1000)) * grain * 1000,
    );
  const rows = samples.map((s) => ({
    ...s,
    latestOffset: BigInt(s.latestOffset),
    committedOffset: s.committedOffset === null ? null : BigInt(s.committedOffset),
    sampledAt,
  }));
  const minuteGrain = `${COARSE_GRAIN_SECONDS} seconds`;
  const samplesTable = sql<{ v: string; p: number; l: bigint; c: bigint | null }>`unnest(
    ${rows.map((r) => r.pipelineVersionId)}::text[], ${rows.map((r) => r.partition)}::int[],
    ${rows.map((r) => r.latestOffset.toString())}::bigint[], ${rows.map((r) => r.committedOffset?.toString() ?? null)}::bigint[])`;
  const fine = await db.$transaction(
    async (tx) => {
      const written = await tx.offsetSample.createMany({
        data: rows.map((r) => ({ ...r, grainSeconds: GRAIN_SECONDS, bucketStart: bucketOf(GRAIN_SECONDS) })),
        skipDuplicates: true,
      });
      await tx.offsetSample.createMany({
        data: rows.map((r) => ({
          ...r,
          grainSeconds: COARSE_GRAIN_SECONDS,
          bucketStart: bucketOf(COARSE_GRAIN_SECONDS),
        })),
        skipDuplicates: true,
      });
      // The 5-minute row is the sample the minute grain keeps for the newest minute sampled in those 5
      // minutes: a sample from a later minute replaces it, one from the same minute does not (the minute
      // row keeps its first). A chart bucket's last sample is then the same from either grain, which
      // time-series.int.test.ts checks. Written after the minute row, in the same transaction.
      await countOf(
        tx,
        tables
          .insertInto("offset_samples")
          .columns([
            "pipeline_version_id",
            "grain_seconds",
            "partition",
            "bucket_start",
            "sampled_at",
            "latest_offset",
            "committed_offset",
          ])
          .expression(
            tables
              .selectFrom(samplesTable.as<"s">(sql`s(v, p, l, c)`))
              .select([
                "s.v",
                sql<number>`${FIVE_MINUTE_GRAIN_SECONDS}::smallint`.as("grain_seconds"),
                "s.p",
                sql<Date>`${bucketOf(FIVE_MINUTE_GRAIN_SECONDS)}::timestamptz`.as("bucket_start"),
                sql<Date>`${sampledAt}::timestamptz`.as("sampled_at"),
                "s.l",
                "s.c",
              ]),
          )
          .onConflict((oc) =>
            oc
              .columns(["pipeline_version_id", "grain_seconds", "bucket_start", "partition"])
              .doUpdateSet((eb) => ({
                sampled_at: eb.ref("excluded.sampled_at"),
                latest_offset: eb.ref("excluded.latest_offset"),
                committed_offset: eb.ref("excluded.committed_offset"),
              }))
              .where(
                (eb) =>
                  sql<Date>`date_bin(${minuteGrain}::interval, ${eb.ref("excluded.sampled_at")}, ${BUCKET_ORIGIN}::timestamptz)`,
                ">",
                (eb) =>
                  sql<Date>`date_bin(${minuteGrain}::interval, ${eb.ref("offset_samples.sampled_at")}, ${BUCKET_ORIGIN}::timestamptz)`,
              ),
          ),
      );
      return written;
      // Interactive (the typed statement is not a Prisma batch operation): the sampler runs beside busy
      // workers, so it gets the same room as the other interactive transactions rather than Prisma's 5 s.
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
  // The count of 10-second samples written (the minute's sample is written with the first of its buckets).
  return fine.count;
}

/** Deletes samples older than the retention; returns how many. */
export async function pruneOffsetSamples(db: PrismaClient, now = new Date()): Promise<number> {
  const { count } = await db.offsetSample.deleteMany({
    where: { bucketStart: { lt: new Date(now.getTime() - OFFSET_SAMPLE_RETENTION_MS) } },
  });
  return count;
}
