// Event time, not processing time: the watermark is max(event time seen) − watermarkDelay. It only
// moves forward. The watermark a batch uses is the one committed by the batch before it, so re-running
// a batch over the same offsets gives the same result (deterministic replay).

export function nextWatermark(
  previous: Date | null,
  maxEventTime: Date | null,
  delayMs: number,
): Date | null {
  if (!maxEventTime) return previous;
  const candidate = new Date(maxEventTime.getTime() - delayMs);
  return previous && previous >= candidate ? previous : candidate;
}

/** Rows with an event time before this are late beyond allowedLateness: watermark − allowedLateness. */
export function lateHorizon(watermark: Date | null, allowedLatenessMs: number): Date | null {
  return watermark && allowedLatenessMs > 0 ? new Date(watermark.getTime() - allowedLatenessMs) : watermark;
}

/** The earliest event time among rows (null: none, or no event-time column). */
export function earliestEventTime(
  rows: readonly { values: Record<string, unknown> }[],
  column: string | undefined,
): Date | null {
  let earliest: Date | null = null;
  if (column)
    for (const r of rows) {
      const t = r.values[column];
      if (t instanceof Date && (!earliest || t < earliest)) earliest = t;
    }
  return earliest;
}
