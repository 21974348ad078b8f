// How far back in event time a pipeline's state reaches by design, read from its spec: dedup keys are
// kept for `within` (or until the watermark, itself `watermarkDelay` behind the newest event, passes
// them plus the allowed lateness), a window until its end plus the lateness has passed the watermark,
// evictable CDC points until the watermark passes them, a join's rows until `waitFor`. State rightly
// grows until that horizon has filled; only growth after it is growth without bound. The state_growth
// rule (evaluate-condition.ts) judges growth only over the time after it — so a healthy new pipeline
// with a 6-hour watermark delay does not page in its first hours. Tolerant of any stored spec shape: a
// part it cannot read counts as no state from that part.
import { formatDuration, parseDuration } from "@sluice/pipeline-spec";
import { z } from "zod";

export interface TStateHorizon {
  /** The longest event-time span the state holds behind the newest event (ms). */
  ms: number;
  /** What sets it, for the rule's summary ("dedup until the watermark: watermarkDelay 6h"). */
  why: string;
}

const ZDur = z.union([z.string(), z.number()]);
const ZWindow = z.object({
  tumbling: ZDur.optional(),
  sliding: z.object({ size: ZDur }).optional(),
});
const ZAgg = z.object({ window: ZWindow.optional(), allowedLateness: ZDur.optional() }).optional();
const ZCdc = z.object({ stateEviction: z.string().optional() }).optional();
const ZSpecTime = z.object({
  eventTime: z.object({ watermarkDelay: ZDur.optional(), idleTimeout: ZDur.optional() }).optional(),
  dedupe: z.object({ within: ZDur.optional() }).optional(),
  aggregate: ZAgg,
  cdc: ZCdc,
  join: z.object({ waitFor: ZDur.optional() }).optional(),
  outputs: z
    .record(z.string(), z.object({ watermarkDelay: ZDur.optional(), aggregate: ZAgg, cdc: ZCdc }))
    .optional(),
});

/** The watermark's default idle timeout (a partition holds it back this long at most): compile-spec.ts. */
const DEFAULT_IDLE_MS = 60_000;

function ms(value: string | number | undefined): number {
  if (value === undefined) return 0;
  try {
    return parseDuration(value);
  } catch {
    return 0;
  }
}

/** The spec's state horizon, or null when nothing in it keeps state over event time. */
export function stateHorizonOf(spec: unknown): TStateHorizon | null {
  const parsed = ZSpecTime.safeParse(spec);
  if (!parsed.success) return null;
  const s = parsed.data;
  const delay = ms(s.eventTime?.watermarkDelay);
  // An idle partition holds the watermark back until its idle timeout: eviction can lag that much.
  const idle = s.eventTime ? ms(s.eventTime.idleTimeout) || DEFAULT_IDLE_MS : 0;
  const d = (x: number) => formatDuration(x);
  const parts: TStateHorizon[] = [];
  const sections = [
    { name: "", delay, aggregate: s.aggregate, cdc: s.cdc },
    ...Object.entries(s.outputs ?? {}).map(([name, o]) => ({
      name: `output ${name}: `,
      delay: o.watermarkDelay === undefined ? delay : ms(o.watermarkDelay),
      aggregate: o.aggregate,
      cdc: o.cdc,
    })),
  ];
  let longestLateWait = 0;
  for (const sec of sections) {
    const lateness = ms(sec.aggregate?.allowedLateness);
    longestLateWait = Math.max(longestLateWait, sec.delay + lateness);
    const window = sec.aggregate?.window;
    const size = window ? ms(window.tumbling ?? window.sliding?.size) : 0;
    if (window)
      parts.push({
        ms: size + sec.delay + lateness + idle,
        why: `${sec.name}windows of ${d(size)} kept for watermarkDelay ${d(sec.delay)} + allowedLateness ${d(lateness)}`,
      });
    if (sec.cdc?.stateEviction === "watermark")
      parts.push({
        ms: sec.delay + lateness + idle,
        why: `${sec.name}CDC history until the watermark passes it (watermarkDelay ${d(sec.delay)})`,
      });
  }
  const within = s.dedupe?.within;
  if (within !== undefined)
    parts.push(
      within === "watermark"
        ? {
            ms: longestLateWait + idle,
            why: `dedup keys until the watermark passes them (watermarkDelay + allowedLateness: ${d(longestLateWait)})`,
          }
        : { ms: ms(within), why: `dedup keys kept within ${d(ms(within))}` },
    );
  if (s.join?.waitFor !== undefined)
    parts.push({ ms: ms(s.join.waitFor) + idle, why: `join rows wait up to ${d(ms(s.join.waitFor))}` });
  if (parts.length === 0) return null;
  return parts.reduce((a, b) => (b.ms > a.ms ? b : a));
}

/**
 * When state that began at `since` has filled its horizon: the horizon plus a tenth of it (at least a
 * minute) for out-of-order input and the watermark's per-partition minimum.
 */
export function stateFilledAt(since: Date, horizon: TStateHorizon | null): Date {
  const h = horizon?.ms ?? 0;
  return new Date(since.getTime() + h + Math.max(60_000, h / 10));
}
