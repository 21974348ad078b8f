import { describe, expect, it } from "vitest";
import { fleetStatus, isBacklogRising, STATUS_ORDER, type TFleetStatusInput } from "./fleet-status";

const running: TFleetStatusInput = {
  phase: "running",
  lastError: null,
  recentBacklog: [40, 10, 60],
  inputRate: 50,
  ingestAgeMs: 2_000,
  freshnessTargetMs: 300_000,
};

describe("fleet status", () => {
  it("a running pipeline with a few seconds of input waiting is caught up; one draining a backlog is running", () => {
    expect(fleetStatus(running)).toEqual({ status: "caught up", reason: null });
    expect(fleetStatus({ ...running, recentBacklog: [9000, 6000, 3000] })).toEqual({
      status: "running",
      reason: "draining a backlog of 3000 events",
    });
  });

  it("a backlog that keeps growing past 30 s of input is lagging, paused or not", () => {
    expect(fleetStatus({ ...running, recentBacklog: [500, 1000, 1600] })).toMatchObject({
      status: "lagging",
      reason: "backlog rising (1600 events waiting)",
    });
    expect(fleetStatus({ ...running, phase: "paused", recentBacklog: [500, 1000, 1600] })).toMatchObject({
      status: "lagging",
      reason: "backlog rising (1600 events waiting) while paused",
    });
    // Growing, but still less than 30 s of input: the noise of a 2-second trigger, not a problem.
    expect(isBacklogRising([20, 40, 90], 50)).toBe(false);
    // Not growing on every step: not rising.
    expect(isBacklogRising([500, 2000, 1800], 50)).toBe(false);
  });

  it("input waiting while the newest committed row is older than the freshness target is lagging", () => {
    expect(fleetStatus({ ...running, recentBacklog: [100, 100, 100], ingestAgeMs: 400_000 }).status).toBe(
      "lagging",
    );
    // A quiet topic is old but has nothing waiting: caught up.
    expect(fleetStatus({ ...running, recentBacklog: [0, 0, 0], ingestAgeMs: 4_000_000 }).status).toBe(
      "caught up",
    );
  });

  it("failed shows the error's first line; paused, stopped and never started say so; problems sort first", () => {
    expect(
      fleetStatus({
        ...running,
        phase: "failed",
        lastError: 'batch 7 stopped by expectation "x"\n  at stack',
      }),
    ).toEqual({ status: "failed", reason: 'batch 7 stopped by expectation "x"' });
    expect(fleetStatus({ ...running, phase: "paused", recentBacklog: [10, 10, 10] }).status).toBe("paused");
    expect(fleetStatus({ ...running, phase: "stopping" }).status).toBe("stopped");
    expect(fleetStatus({ ...running, phase: null }).status).toBe("not started");
    expect(
      STATUS_ORDER.failed < STATUS_ORDER.lagging &&
        STATUS_ORDER.lagging < STATUS_ORDER.paused &&
        STATUS_ORDER.running < STATUS_ORDER["caught up"],
    ).toBe(true);
  });
});
