// Time ranges and buckets for every chart: a range is asked for, the server picks a bucket width so a
// series has at most MAX_POINTS points, aligned to the rollups' 10-second grain (batch_rollup,
// partition_rollup, offset_samples all bucket with date_bin('10 seconds', …, BUCKET_ORIGIN)).
import { z } from "zod";

/** The rollups' finest grain: every chart bucket is a whole number of these. */
export const GRAIN_SECONDS = 10;
/** The coarse grain, read by every chart whose step is a whole number of minutes. */
export const COARSE_GRAIN_SECONDS = 60;
export type TGrain = typeof GRAIN_SECONDS | typeof COARSE_GRAIN_SECONDS;
export const BUCKET_ORIGIN = new Date("2000-01-01T00:00:00.000Z");
/** At most this many points per series. */
export const MAX_POINTS = 360;
/** The longest range a chart may ask for (rollups older than this may be pruned). */
export const MAX_RANGE_MS = 31 * 24 * 3600_000;

/** Bucket widths a chart may get, smallest first: round numbers a person reads on an axis. */
const STEPS_SECONDS = [10, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400];

export const RANGE_PRESETS = { "15m": 15 * 60_000, "1h": 3600_000, "6h": 6 * 3600_000, "24h": 24 * 3600_000, "7d": 7 * 24 * 3600_000 } as const;
export type TRangePreset = keyof typeof RANGE_PRESETS;

export const ZTimeRange = z
  .object({ from: z.coerce.date(), to: z.coerce.date() })
  .refine((r) => r.to.getTime() > r.from.getTime(), { error: "the range must end after it starts (to > from)" })
  .refine((r) => r.to.getTime() - r.from.getTime() <= MAX_RANGE_MS, { error: "the range is at most 31 days: pick a shorter one" });
export type TTimeRange = z.infer<typeof ZTimeRange>;

export interface TBucketing {
  /** The first bucket's start (aligned; at or before the range's start). */
  from: Date;
  /** The range's end (exclusive). */
  to: Date;
  stepSeconds: number;
  /** Which rollup grain the buckets are binned from: the coarsest that divides the step. */
  grain: TGrain;
  /** Every bucket's start, oldest first (so gaps with no data are explicit). */
  starts: Date[];
}

/** The range a preset means, ending now. */
export function presetRange(preset: TRangePreset, now = new Date()): TTimeRange {
  return { from: new Date(now.getTime() - RANGE_PRESETS[preset]), to: now };
}

/** The smallest step that keeps the range within `maxPoints` buckets, and the aligned bucket starts. */
export function bucketRange(range: TTimeRange, maxPoints = MAX_POINTS): TBucketing {
  const spanS = (range.to.getTime() - range.from.getTime()) / 1000;
  const stepSeconds = STEPS_SECONDS.find((s) => spanS / s <= maxPoints) ?? STEPS_SECONDS.at(-1)!;
  const stepMs = stepSeconds * 1000;
  const origin = BUCKET_ORIGIN.getTime();
  const first = origin + Math.floor((range.from.getTime() - origin) / stepMs) * stepMs;
  const starts: Date[] = [];
  for (let t = first; t < range.to.getTime(); t += stepMs) starts.push(new Date(t));
  return { from: new Date(first), to: range.to, stepSeconds, grain: stepSeconds % COARSE_GRAIN_SECONDS === 0 ? COARSE_GRAIN_SECONDS : GRAIN_SECONDS, starts };
}

/**
 * An arbitrary [from, to) as rollup buckets: the whole minutes inside it from the coarse grain, the
 * edges from the fine one, so a total over a week reads ~10k rows per version and is still exact to
 * the 10-second bucket.
 */
export function splitByGrain(from: Date, to: Date): { coarseFrom: Date; coarseTo: Date } {
  const m = COARSE_GRAIN_SECONDS * 1000;
  const o = BUCKET_ORIGIN.getTime();
  const coarseFrom = o + Math.ceil((from.getTime() - o) / m) * m;
  const coarseTo = o + Math.floor((to.getTime() - o) / m) * m;
  return coarseFrom < coarseTo ? { coarseFrom: new Date(coarseFrom), coarseTo: new Date(coarseTo) } : { coarseFrom: from, coarseTo: from };
}
