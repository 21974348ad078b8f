// The workers' timer loops (the reconciler, the offset sampler, keeping the alert job scheduled) share
// one shape: a pass every interval, never two at once — a pass asked for while one runs (a test's
// tick(), a slow pass meeting the next timer) joins it — a failed pass logged and tried again next
// interval, never thrown into the process, and a stop that waits for the pass in flight, so shutdown
// never closes a connection under it. The next interval starts when a pass ends, so a slow pass delays
// the next one rather than stacking up behind it.
import { jitteredMs } from "@sluice/retry-policy";

/** One run at a time: calling run() while one is in flight returns that one instead of starting another. */
export interface SingleFlight<T> {
  run(): Promise<T>;
  /** Resolves once nothing is in flight (a failure included: the caller of run() sees it). */
  idle(): Promise<void>;
}

export function singleFlight<T>(fn: () => Promise<T>): SingleFlight<T> {
  let inFlight: Promise<T> | undefined;
  return {
    run: () => (inFlight ??= fn().finally(() => (inFlight = undefined))),
    idle: async () => {
      await inFlight?.catch(() => undefined);
    },
  };
}

export interface PeriodicLoop<T> {
  /** A pass now, or the one in flight; rejects if it fails (the loop itself only logs). */
  tick(): Promise<T>;
  /** No more passes; resolves when the pass in flight, and its error handling, have finished. */
  stop(): Promise<void>;
}

export function startPeriodicLoop<T>(opts: {
  pass: () => Promise<T>;
  intervalMs: number;
  /** Spread each interval by ±this fraction (0.25: 75–125%) so that workers' passes drift apart. */
  jitter?: number;
  /** A first pass at once, not only after the first interval. */
  immediate?: boolean;
  /** Told about a failed pass (log it; reset what the pass holds). Its own failure is ignored. */
  onError: (err: unknown) => void | Promise<void>;
}): PeriodicLoop<T> {
  const flight = singleFlight(opts.pass);
  const turns = new Set<Promise<void>>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  /** One pass whose failure goes to onError, tracked until its error handling is done. */
  function turn(): Promise<void> {
    const t = flight
      .run()
      .then(
        () => undefined,
        async (err: unknown) => {
          await opts.onError(err);
        },
      )
      .catch(() => undefined)
      .finally(() => turns.delete(t));
    turns.add(t);
    return t;
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => void turn().finally(schedule), jitteredMs(opts.intervalMs, opts.jitter ?? 0));
    timer.unref();
  }

  if (opts.immediate) void turn();
  schedule();
  return {
    tick: flight.run,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all([...turns]);
      await flight.idle();
    },
  };
}
