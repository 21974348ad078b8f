// Time ranges and buckets for every chart: a range is asked for, the server picks a bucket width so a
// series has at most MAX_POINTS points, aligned to the rollups' 10-second grain (batch_rollup,
// partition_rollup, offset_samples all bucket with date_bin(grain, …, BUCKET_ORIGIN)), and reads the
// coarsest grain that divides that width — 10 s, 60 s or 5 min — so no chart reads more rows than it must.
import { z } from "zod";

/** The rollups' finest grain: every chart bucket is a whole number of these. */
export const GRAIN_SECONDS = 10;
/** The minute grain, read by every chart whose step is a whole number of minutes (not of 5 minutes). */
export const COARSE_GRAIN_SECONDS = 60;
/** The 5-minute grain, for steps of 5 minutes and more (24 h and longer ranges): a 7-day chart reads ~2,000 buckets, not ~10,000. */
export const FIVE_MINUTE_GRAIN_SECONDS = 300;
export type TGrain = typeof GRAIN_SECONDS | typeof COARSE_GRAIN_SECONDS | typeof FIVE_MINUTE_GRAIN_SECONDS;
/** Every grain the rollups and offset samples are kept at, coarsest first. */
export const GRAINS_COARSEST_FIRST: readonly TGrain[] = [
  FIVE_MINUTE_GRAIN_SECONDS,
  COARSE_GRAIN_SECONDS,
  GRAIN_SECONDS,
];
export const BUCKET_ORIGIN = new Date("2000-01-01T00:00:00.000Z");
/** At most this many points per series. */
export const MAX_POINTS = 360;
/** The longest range a chart may ask for (rollups older than this may be pruned). */
export const MAX_RANGE_MS = 31 * 24 * 3600_000;

/** Bucket widths a chart may get, smallest first: round numbers a person reads on an axis. */
const STEPS_SECONDS = [10, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400];

export const RANGE_PRESETS = {
  "15m": 15 * 60_000,
  "1h": 3600_000,
  "6h": 6 * 3600_000,
  "24h": 24 * 3600_000,
  "7d": 7 * 24 * 3600_000,
} as const;
export type TRangePreset = keyof typeof RANGE_PRESETS;

export const ZTimeRange = z
  .object({ from: z.coerce.date(), to: z.coerce.date() })
  .refine((r) => r.to.getTime() > r.from.getTime(), {
    error: "the range must end after it starts (to > from)",
  })
  .refine((r) => r.to.getTime() - r.from.getTime() <= MAX_RANGE_MS, {
    error: "the range is at most 31 days: pick a shorter one",
  });
export type TTimeRange = z.infer<typeof ZTimeRange>;

export interface TBucketing {
  /** The first bucket's start (aligned; at or before the range's start). */
  from: Date;
  /** The range's end (exclusive). */
  to: Date;
  stepSeconds: number;
  /** Which rollup grain the buckets are binned from: the coarsest that divides the step (chartSegments: the last, partial bucket from finer ones). */
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
  return { from: new Date(first), to: range.to, stepSeconds, grain: grainFor(stepSeconds), starts };
}

/** The coarsest grain a step is a whole number of (every step is a whole number of 10-second grains). */
export function grainFor(stepSeconds: number): TGrain {
  return GRAINS_COARSEST_FIRST.find((g) => stepSeconds % g === 0) ?? GRAIN_SECONDS;
}

/** One grain's share of a range: the buckets of `grain` starting in [from, to). */
export interface TGrainSegment {
  grain: TGrain;
  from: Date;
  to: Date;
}

/**
 * An arbitrary [from, to) as rollup buckets, each from the coarsest grain that fits: the whole 5-minute
 * buckets inside it from the 5-minute grain, the whole minutes beside them from the minute grain, the
 * edges from the 10-second one — so a total over a week reads ~2k rows per version and is still exact
 * to the 10-second bucket. Segments are disjoint, cover the range's 10-second buckets, and come in
 * ascending time; empty ones are left out.
 */
export function splitByGrain(
  from: Date,
  to: Date,
  grains: readonly TGrain[] = GRAINS_COARSEST_FIRST,
): TGrainSegment[] {
  const [grain, ...finer] = grains;
  if (grain === undefined || from.getTime() >= to.getTime()) return [];
  if (finer.length === 0) return [{ grain, from, to }];
  const m = grain * 1000;
  const o = BUCKET_ORIGIN.getTime();
  const inFrom = o + Math.ceil((from.getTime() - o) / m) * m;
  const inTo = o + Math.floor((to.getTime() - o) / m) * m;
  if (inFrom >= inTo) return splitByGrain(from, to, finer);
  return [
    ...splitByGrain(from, new Date(inFrom), finer),
    { grain, from: new Date(inFrom), to: new Date(inTo) },
    ...splitByGrain(new Date(inTo), to, finer),
  ];
}

/**
 * The rollup rows a chart reads: whole buckets of its grain, and the last, partial one from the finer
 * grains down to the minute (for steps of whole minutes; the 10-second grain for the rest) — so the
 * 5-minute grain changes no number on a chart: every bucket holds exactly what the minute grain gave
 * (time-series.int.test.ts compares them). `from` defaults to the first bucket's start.
 */
export function chartSegments(
  b: Pick<TBucketing, "from" | "to" | "grain">,
  from: Date = b.from,
): TGrainSegment[] {
  const floor = b.grain === GRAIN_SECONDS ? GRAIN_SECONDS : COARSE_GRAIN_SECONDS;
  return splitByGrain(
    from,
    b.to,
    GRAINS_COARSEST_FIRST.filter((g) => g <= b.grain && g >= floor),
  );
}
