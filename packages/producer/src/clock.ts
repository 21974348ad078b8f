// Where an event's "now" comes from. The stream reads the clock exactly once per generated event, so a
// simulated clock makes event times a pure function of the seed and options (tests, benchmarks), while
// the live demo uses wall-clock time.

export interface Clock {
  /** Milliseconds since the epoch. The event stream calls this once per generated event. */
  now(): number;
}

/** Default start of the simulated clock: fixed, so that a seed alone pins every event_time. */
export const DEFAULT_SIMULATED_START = Date.UTC(2025, 0, 1, 0, 0, 0);

export interface SimulatedClockOptions {
  /** First reading, ms since the epoch or an ISO-8601 string. Default 2025-01-01T00:00:00.000Z. */
  start?: number | string | Date;
  /** How far the clock moves between readings, in ms (>= 0, may be fractional). Default 10. */
  stepMs?: number;
}

/** The n-th call to `now()` returns `start + n * stepMs` (rounded down to whole ms). */
export function simulatedClock(options: SimulatedClockOptions = {}): Clock {
  const start = toEpochMs(options.start ?? DEFAULT_SIMULATED_START);
  const stepMs = options.stepMs ?? 10;
  if (!(stepMs >= 0) || !Number.isFinite(stepMs)) throw new RangeError(`stepMs must be >= 0, got ${stepMs}`);
  let readings = 0;
  // Multiply instead of accumulating so fractional steps do not drift with floating-point error.
  return { now: () => Math.floor(start + readings++ * stepMs) };
}

export function realClock(): Clock {
  return { now: () => Date.now() };
}

function toEpochMs(value: number | string | Date): number {
  const ms = value instanceof Date ? value.getTime() : typeof value === "string" ? Date.parse(value) : value;
  if (!Number.isFinite(ms)) throw new RangeError(`not a valid time: ${String(value)}`);
  return ms;
}
