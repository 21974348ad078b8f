// Event-time windows (product.md semantics 4): a row belongs to the windows that contain its own
// event time — never its processing time. Windows are aligned to the Unix epoch, so a 5-minute
// tumbling window starts at :00, :05, :10, …: a sale at 23:58 is in [23:55, 00:00) whenever it arrives.

export interface WindowBounds {
  start: number;
  end: number;
}

/** Every window of `sizeMs`, sliding by `slideMs` (= size for tumbling), that contains `timeMs`. */
export function windowsContaining(timeMs: number, sizeMs: number, slideMs: number): WindowBounds[] {
  const last = Math.floor(timeMs / slideMs) * slideMs;
  const windows: WindowBounds[] = [];
  for (let start = last; start + sizeMs > timeMs; start -= slideMs)
    windows.push({ start, end: start + sizeMs });
  return windows.reverse();
}

/** A window is final once the watermark passes its end plus allowedLateness: no row can update it again. */
export function isFinal(windowEndMs: number, watermark: Date | null, allowedLatenessMs: number): boolean {
  return watermark !== null && windowEndMs + allowedLatenessMs <= watermark.getTime();
}
