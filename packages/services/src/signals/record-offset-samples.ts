// The workers' offset sampler writes here: per pipeline version and partition, the topic's log end and
// the version's committed offset, one row per 10-second bucket and one per minute (the first sample in a
// bucket wins, so several workers sampling at once write each bucket once), and one per 5 minutes that
// holds the newest minute's sample (see below). Old samples are pruned.
import type { PrismaClient } from "@sluice/db";
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
  const [fine] = await db.$transaction([
    db.offsetSample.createMany({
      data: rows.map((r) => ({ ...r, grainSeconds: GRAIN_SECONDS, bucketStart: bucketOf(GRAIN_SECONDS) })),
      skipDuplicates: true,
    }),
    db.offsetSample.createMany({
      data: rows.map((r) => ({
        ...r,
        grainSeconds: COARSE_GRAIN_SECONDS,
        bucketStart: bucketOf(COARSE_GRAIN_SECONDS),
      })),
      skipDuplicates: true,
    }),
    // The 5-minute row is the sample the minute grain keeps for the newest minute sampled in those 5
    // minutes: a sample from a later minute replaces it, one from the same minute does not (the minute
    // row keeps its first). A chart bucket's last sample is then the same from either grain, which
    // time-series.int.test.ts checks. Written after the minute row, in the same transaction.
    db.$executeRaw`
      INSERT INTO offset_samples AS o (pipeline_version_id, grain_seconds, partition, bucket_start, sampled_at, latest_offset, committed_offset)
      SELECT v, ${FIVE_MINUTE_GRAIN_SECONDS}::smallint, p, ${bucketOf(FIVE_MINUTE_GRAIN_SECONDS)}::timestamptz, ${sampledAt}::timestamptz, l, c
        FROM unnest(${rows.map((r) => r.pipelineVersionId)}::text[], ${rows.map((r) => r.partition)}::int[],
                    ${rows.map((r) => r.latestOffset.toString())}::bigint[], ${rows.map((r) => r.committedOffset?.toString() ?? null)}::bigint[]) AS s(v, p, l, c)
      ON CONFLICT (pipeline_version_id, grain_seconds, bucket_start, partition) DO UPDATE
         SET sampled_at = EXCLUDED.sampled_at, latest_offset = EXCLUDED.latest_offset, committed_offset = EXCLUDED.committed_offset
       WHERE date_bin(${`${COARSE_GRAIN_SECONDS} seconds`}::interval, EXCLUDED.sampled_at, ${BUCKET_ORIGIN}::timestamptz)
           > date_bin(${`${COARSE_GRAIN_SECONDS} seconds`}::interval, o.sampled_at, ${BUCKET_ORIGIN}::timestamptz)`,
  ]);
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
