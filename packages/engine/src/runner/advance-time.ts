// The event time a batch commits: per partition max event time, combined as the minimum over
// partitions that are not idle (batch/partition-watermark.ts), minus watermarkDelay, never moving back;
// and where dedup state may be evicted. Shared by the runner and the dry run, so a dry run's windows
// close exactly when a real batch's would.
import type { TCompiledSpec } from "@sluice/pipeline-spec";
import { dedupHorizon } from "../batch/dedup";
import { advancePartitionClocks, combinedEventTime } from "../batch/partition-watermark";
import type { ProcessedBatch } from "../batch/process-batch";
import { lateHorizon, nextWatermark } from "../batch/watermark";
import type { Checkpoint } from "../store/checkpoint-store";

export type TimedBatch = Pick<
  ProcessedBatch,
  "maxEventTime" | "maxDedupTime" | "maxEventTimeByPartition" | "partitionsWithData"
>;

export function advanceTime(
  compiled: TCompiledSpec,
  cp: Pick<Checkpoint, "watermark" | "eventTimeMax">,
  processed: TimedBatch,
  now: Date,
  /** Partitions with records not read yet, of other partition groups (partition-watermark.ts). */
  unread?: ReadonlySet<number>,
) {
  const later = (a: string | undefined, b: Date | null) => {
    const prev = a ? new Date(a) : null;
    return !b ? prev : !prev || b > prev ? b : prev;
  };
  const maxEvent = later(cp.eventTimeMax.eventTime, processed.maxEventTime);
  const maxDedup = later(cp.eventTimeMax.dedupTime, processed.maxDedupTime);
  const { timing } = compiled;
  const partitions = advancePartitionClocks(cp.eventTimeMax.partitions, processed, now);
  const combined = combinedEventTime(partitions, now, timing.idleTimeoutMs ?? 60_000, unread);
  const watermark =
    timing.watermarkDelayMs === undefined
      ? null
      : nextWatermark(cp.watermark, combined.eventTime, timing.watermarkDelayMs);
  // Rows within allowedLateness are still accepted, so their dedup keys must outlive the watermark by as much.
  const evictBefore = compiled.spec.dedupe
    ? dedupHorizon({
        watermark: lateHorizon(watermark, timing.allowedLatenessMs),
        maxSeen: maxDedup,
        ...(timing.dedupeWithinMs !== undefined ? { withinMs: timing.dedupeWithinMs } : {}),
      })
    : null;
  const eventTimeMax = {
    ...(maxEvent ? { eventTime: maxEvent.toISOString() } : {}),
    ...(maxDedup ? { dedupTime: maxDedup.toISOString() } : {}),
    ...(Object.keys(partitions).length > 0 ? { partitions } : {}),
  };
  // eventTime: the source's event time before the delay (a pipeline with outputs or a join derives
  // each output's watermark from it, output/output-time.ts); maxDedup: the newest dedup time seen.
  return {
    watermark,
    eventTimeMax,
    evictBefore,
    partitionEventTime: combined.partitions,
    eventTime: combined.eventTime,
    maxDedup,
  };
}

/**
 * A replay batch moves no time: its rows are old, and the watermark follows the source's partitions,
 * so it keeps the checkpoint's watermark, event-time clocks and dedup horizon exactly.
 */
export function unchangedTime(cp: Pick<Checkpoint, "watermark" | "eventTimeMax">) {
  return {
    watermark: cp.watermark,
    eventTimeMax: cp.eventTimeMax,
    evictBefore: null,
    partitionEventTime: [],
    eventTime: null,
    maxDedup: null,
  };
}

/** A batch that read nothing: what the watermark is advanced with when every partition is idle. */
export const NO_INPUT: Pick<
  ProcessedBatch,
  "maxEventTime" | "maxDedupTime" | "maxEventTimeByPartition" | "partitionsWithData"
> = {
  maxEventTime: null,
  maxDedupTime: null,
  maxEventTimeByPartition: new Map(),
  partitionsWithData: new Set(),
};
