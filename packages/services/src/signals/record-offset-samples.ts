// The workers' offset sampler writes here: per pipeline version and partition, the topic's log end and
// the version's committed offset, one row per 10-second bucket and one per minute (the first sample in a
// bucket wins, so several workers sampling at once write each bucket once). Old samples are pruned.
import type { PrismaClient } from "@sluice/db";
import { BUCKET_ORIGIN, COARSE_GRAIN_SECONDS, GRAIN_SECONDS } from "./time-range";

export interface TOffsetSampleInput {
  pipelineVersionId: string;
  partition: number;
  latestOffset: number;
  committedOffset: number | null;
}

/** Samples are kept this long (charts reach back 7 days; a custom range up to 31). */
export const OFFSET_SAMPLE_RETENTION_MS = 32 * 24 * 3600_000;

export async function recordOffsetSamples(db: PrismaClient, samples: TOffsetSampleInput[], sampledAt = new Date()): Promise<number> {
  if (samples.length === 0) return 0;
  const bucketOf = (grain: number) => new Date(BUCKET_ORIGIN.getTime() + Math.floor((sampledAt.getTime() - BUCKET_ORIGIN.getTime()) / (grain * 1000)) * grain * 1000);
  const rows = samples.map((s) => ({ ...s, latestOffset: BigInt(s.latestOffset), committedOffset: s.committedOffset === null ? null : BigInt(s.committedOffset), sampledAt }));
  const [fine] = await db.$transaction([
    db.offsetSample.createMany({ data: rows.map((r) => ({ ...r, grainSeconds: GRAIN_SECONDS, bucketStart: bucketOf(GRAIN_SECONDS) })), skipDuplicates: true }),
    db.offsetSample.createMany({ data: rows.map((r) => ({ ...r, grainSeconds: COARSE_GRAIN_SECONDS, bucketStart: bucketOf(COARSE_GRAIN_SECONDS) })), skipDuplicates: true }),
  ]);
  // The count of 10-second samples written (the minute's sample is written with the first of its buckets).
  return fine.count;
}

/** Deletes samples older than the retention; returns how many. */
export async function pruneOffsetSamples(db: PrismaClient, now = new Date()): Promise<number> {
  const { count } = await db.offsetSample.deleteMany({ where: { bucketStart: { lt: new Date(now.getTime() - OFFSET_SAMPLE_RETENTION_MS) } } });
  return count;
}
