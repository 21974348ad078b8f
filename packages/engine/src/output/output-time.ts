// Event time per output. Every output has its own watermark — the source's event time (the minimum
// over active partitions, runner/advance-time.ts) minus the output's watermarkDelay, never moving
// back — and its own allowedLateness. A row is late for an output once it is behind that output's
// watermark minus its lateness; it is the pipeline's `late` outcome only when it is late for every
// output, so the shared late check and the dedup horizon follow the most patient output.
// A join holds rows back: while a row waits for its dimension, no output's watermark passes its event
// time, so the row is on time when it is emitted (windows containing it are still open).
import type { TCompiledSpec } from "@sluice/pipeline-spec";
import { dedupHorizon } from "../batch/dedup";
import { lateHorizon } from "../batch/watermark";

export interface OutputTiming {
  name: string;
  delayMs: number;
  latenessMs: number;
}

/** What the checkpoint keeps per output (checkpoints.outputs), for a pipeline with several outputs or a join. */
export interface OutputCheckpoint {
  watermark: string | null;
  stateRows: number;
  stateBytes: number;
}

export type OutputCheckpoints = Record<string, OutputCheckpoint>;

export function outputTiming(name: string, compiled: TCompiledSpec): OutputTiming {
  return {
    name,
    delayMs: compiled.timing.watermarkDelayMs ?? 0,
    latenessMs: compiled.timing.allowedLatenessMs,
  };
}

/** The watermark after a batch: event time minus delay, held at the earliest row still waiting, never back. */
export function nextOutputWatermark(
  previous: Date | null,
  eventTime: Date | null,
  delayMs: number,
  heldMinMs: number | null,
): Date | null {
  if (!eventTime) return previous;
  let candidate = eventTime.getTime() - delayMs;
  if (heldMinMs !== null && heldMinMs < candidate) candidate = heldMinMs;
  return previous && previous.getTime() >= candidate ? previous : new Date(candidate);
}

/**
 * Rows before this are late for every output: the earliest of the outputs' horizons (watermark minus
 * lateness). An output without a watermark yet makes nothing late.
 */
export function sharedLateHorizon(
  timings: readonly OutputTiming[],
  watermarks: ReadonlyMap<string, Date | null>,
): Date | null {
  let min: number | null = null;
  for (const t of timings) {
    const h = lateHorizon(watermarks.get(t.name) ?? null, t.latenessMs);
    if (!h) return null;
    if (min === null || h.getTime() < min) min = h.getTime();
  }
  return min === null ? null : new Date(min);
}

export interface TimeAfterBatch {
  /** The pipeline's own watermark (eventTime.watermarkDelay), as checkpoints.watermark keeps it. */
  watermark: Date | null;
  /** Each output's watermark. */
  outputs: Map<string, Date | null>;
  /** Rows before this are late for every output from the next batch on. */
  lateHorizon: Date | null;
  /** Dedup keys with a time before this are evicted. */
  evictBefore: Date | null;
}

/**
 * Every watermark a batch commits. For a pipeline with one sink and no join this is what advance-time
 * computes on its own; with outputs or a join, each output's watermark and the shared horizons.
 */
export function timeAfterBatch(input: {
  compiled: TCompiledSpec;
  timings: readonly OutputTiming[];
  previous: { watermark: Date | null; outputs: ReadonlyMap<string, Date | null> };
  eventTime: Date | null;
  heldMinMs: number | null;
  maxDedupTime: Date | null;
}): TimeAfterBatch {
  const { compiled, timings, previous, eventTime, heldMinMs } = input;
  const outputs = new Map(
    timings.map((t) => [
      t.name,
      nextOutputWatermark(previous.outputs.get(t.name) ?? null, eventTime, t.delayMs, heldMinMs),
    ]),
  );
  const watermark =
    compiled.timing.watermarkDelayMs === undefined
      ? null
      : nextOutputWatermark(previous.watermark, eventTime, compiled.timing.watermarkDelayMs, heldMinMs);
  const horizon = sharedLateHorizon(timings, outputs);
  const evictBefore = compiled.spec.dedupe
    ? dedupHorizon({
        watermark: horizon,
        maxSeen: input.maxDedupTime,
        ...(compiled.timing.dedupeWithinMs !== undefined ? { withinMs: compiled.timing.dedupeWithinMs } : {}),
      })
    : null;
  return { watermark, outputs, lateHorizon: horizon, evictBefore };
}

export function outputWatermarksOf(checkpoints: OutputCheckpoints): Map<string, Date | null> {
  return new Map(
    Object.entries(checkpoints).map(([name, c]) => [name, c.watermark ? new Date(c.watermark) : null]),
  );
}
