import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { singleFlight, startPeriodicLoop } from "./periodic-loop";

/** A promise settled from outside: a pass that is "in flight" until the test says so. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("singleFlight", () => {
  it("a run asked for while one is in flight joins it; the next starts after it settles", async () => {
    const d = deferred<number>();
    const fn = vi.fn(() => d.promise);
    const flight = singleFlight(fn);
    const a = flight.run();
    const b = flight.run();
    expect(b).toBe(a);
    expect(fn).toHaveBeenCalledTimes(1);
    d.resolve(7);
    expect(await a).toBe(7);
    fn.mockResolvedValueOnce(8);
    expect(await flight.run()).toBe(8);
    expect(fn).toHaveBeenCalledTimes(2);
  });

  it("idle() waits for the run in flight and does not throw its failure", async () => {
    const d = deferred();
    const flight = singleFlight(() => d.promise);
    const run = flight.run();
    let idle = false;
    const waiting = flight.idle().then(() => (idle = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(idle).toBe(false);
    d.reject(new Error("boom"));
    await expect(run).rejects.toThrow("boom");
    await waiting;
    expect(idle).toBe(true);
  });
});

describe("startPeriodicLoop", () => {
  it("runs a pass every interval, the first after one interval", async () => {
    const pass = vi.fn(async () => undefined);
    const loop = startPeriodicLoop({ pass, intervalMs: 1000, onError: () => undefined });
    expect(pass).toHaveBeenCalledTimes(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(pass).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(3000);
    expect(pass).toHaveBeenCalledTimes(4);
    await loop.stop();
  });

  it("immediate: a first pass at once", async () => {
    const pass = vi.fn(async () => undefined);
    const loop = startPeriodicLoop({ pass, intervalMs: 1000, immediate: true, onError: () => undefined });
    await vi.advanceTimersByTimeAsync(0);
    expect(pass).toHaveBeenCalledTimes(1);
    await loop.stop();
  });

  it("never overlaps passes: a slow pass delays the next, and tick() joins the one in flight", async () => {
    const d = deferred<string>();
    const pass = vi.fn(() => d.promise);
    const loop = startPeriodicLoop({ pass, intervalMs: 1000, onError: () => undefined });
    await vi.advanceTimersByTimeAsync(1000);
    expect(pass).toHaveBeenCalledTimes(1);
    const joined = loop.tick();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(pass).toHaveBeenCalledTimes(1);
    d.resolve("done");
    expect(await joined).toBe("done");
    // The next interval starts when the pass ends.
    pass.mockResolvedValue("next");
    await vi.advanceTimersByTimeAsync(999);
    expect(pass).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(pass).toHaveBeenCalledTimes(2);
    await loop.stop();
  });

  it("stop() waits for the pass in flight, and no pass starts after it", async () => {
    const d = deferred();
    const pass = vi.fn(() => d.promise);
    const loop = startPeriodicLoop({ pass, intervalMs: 1000, onError: () => undefined });
    await vi.advanceTimersByTimeAsync(1000);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(5000);
    expect(stopped).toBe(false);
    d.resolve();
    await stopping;
    expect(stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(pass).toHaveBeenCalledTimes(1);
  });

  it("stop() waits for a failed pass's error handling too", async () => {
    const handled = deferred();
    const onError = vi.fn(() => handled.promise);
    const loop = startPeriodicLoop({
      pass: () => Promise.reject(new Error("down")),
      intervalMs: 1000,
      onError,
    });
    await vi.advanceTimersByTimeAsync(1000);
    expect(onError).toHaveBeenCalledTimes(1);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    handled.resolve();
    await stopping;
    expect(stopped).toBe(true);
  });

  it("a failed pass is handed to onError, never thrown, and the loop goes on", async () => {
    const unhandled = vi.fn();
    process.on("unhandledRejection", unhandled);
    try {
      const err = new Error("Postgres down");
      const pass = vi.fn(async () => {
        throw err;
      });
      const onError = vi.fn(() => {
        throw new Error("the logger failed too");
      });
      const loop = startPeriodicLoop({ pass, intervalMs: 1000, immediate: true, onError });
      await vi.advanceTimersByTimeAsync(2000);
      expect(pass).toHaveBeenCalledTimes(3);
      expect(onError).toHaveBeenCalledTimes(3);
      expect(onError).toHaveBeenCalledWith(err);
      // Asked for directly, the failure reaches the caller.
      await expect(loop.tick()).rejects.toBe(err);
      await loop.stop();
      await vi.advanceTimersByTimeAsync(0);
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off("unhandledRejection", unhandled);
    }
  });

  it("jitter spreads each interval by ±the fraction", async () => {
    // The first wait drawn at 75% of the interval, the next at 125%.
    vi.spyOn(Math, "random").mockReturnValueOnce(0).mockReturnValue(0.999999);
    const pass = vi.fn(async () => undefined);
    const loop = startPeriodicLoop({ pass, intervalMs: 1000, jitter: 0.25, onError: () => undefined });
    await vi.advanceTimersByTimeAsync(749);
    expect(pass).toHaveBeenCalledTimes(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(pass).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1249);
    expect(pass).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(pass).toHaveBeenCalledTimes(2);
    await loop.stop();
  });
});
