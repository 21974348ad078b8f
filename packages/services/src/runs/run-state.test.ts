import { describe, expect, it } from "vitest";
import { applyRunCommand, RunCommandError, runPhase } from "./run-state";
import { nextBatchDelay } from "./finish-batch-turn";

describe("run-state machine", () => {
  it("start begins a new scheduling turn from stopped, and is a no-op when running", () => {
    expect(applyRunCommand("start", "stopped", "stopped", false)).toEqual({
      noop: false,
      desired: "running",
      status: "running",
      newTurn: true,
      clearFailure: true,
    });
    expect(applyRunCommand("start", "running", "running", true).noop).toBe(true);
  });

  it("pause with a batch in flight only changes the wish; the worker settles it after the commit", () => {
    const effect = applyRunCommand("pause", "running", "running", true);
    expect(effect).toMatchObject({ desired: "paused", status: "running", newTurn: false });
    expect(runPhase(effect.status, effect.desired)).toBe("pausing");
  });

  it("pause with no batch in flight takes effect at once", () => {
    expect(applyRunCommand("pause", "running", "running", false)).toMatchObject({
      desired: "paused",
      status: "paused",
    });
  });

  it("resume cancels a pending pause without a new turn, and starts a new turn from paused", () => {
    expect(applyRunCommand("resume", "running", "paused", true)).toMatchObject({
      desired: "running",
      status: "running",
      newTurn: false,
    });
    expect(applyRunCommand("resume", "paused", "paused", false)).toMatchObject({
      desired: "running",
      status: "running",
      newTurn: true,
      clearFailure: false,
    });
  });

  it("stop applies to running, paused and failed versions; restart only to failed ones", () => {
    expect(applyRunCommand("stop", "failed", "running", false)).toMatchObject({
      status: "stopped",
      desired: "stopped",
    });
    expect(applyRunCommand("stop", "paused", "paused", false)).toMatchObject({ status: "stopped" });
    expect(applyRunCommand("restart", "failed", "running", false)).toMatchObject({
      status: "running",
      newTurn: true,
      clearFailure: true,
    });
    expect(() => applyRunCommand("restart", "stopped", "stopped", false)).toThrow(
      /cannot restart: the pipeline version is stopped.*use start/,
    );
  });

  it("commands that do not apply say what to do instead", () => {
    expect(() => applyRunCommand("start", "paused", "paused", false)).toThrow(RunCommandError);
    expect(() => applyRunCommand("start", "paused", "paused", false)).toThrow(/use resume/);
    expect(() => applyRunCommand("resume", "failed", "running", false)).toThrow(/use restart/);
    expect(() => applyRunCommand("pause", "stopped", "stopped", false)).toThrow(/use start/);
  });
});

describe("next batch delay", () => {
  const startedAt = new Date("2025-01-01T00:00:00Z");
  const at = (ms: number) => new Date(startedAt.getTime() + ms);

  it("a backlog is worked off at once; otherwise the next batch starts one interval after this one started", () => {
    expect(
      nextBatchDelay({ committed: true, backlog: 10, triggerEveryMs: 2000, startedAt, now: at(300) }),
    ).toEqual({ drained: false, delayMs: 0 });
    expect(
      nextBatchDelay({ committed: true, backlog: 0, triggerEveryMs: 2000, startedAt, now: at(300) }),
    ).toEqual({ drained: false, delayMs: 1700 });
    expect(
      nextBatchDelay({ committed: false, backlog: 0, triggerEveryMs: 2000, startedAt, now: at(2500) }),
    ).toEqual({ drained: false, delayMs: 0 });
  });

  it("availableNow drains the backlog, then stops", () => {
    expect(nextBatchDelay({ committed: true, backlog: 5, triggerEveryMs: undefined, startedAt })).toEqual({
      drained: false,
      delayMs: 0,
    });
    expect(nextBatchDelay({ committed: true, backlog: 0, triggerEveryMs: undefined, startedAt })).toEqual({
      drained: true,
    });
    expect(nextBatchDelay({ committed: false, backlog: 0, triggerEveryMs: undefined, startedAt })).toEqual({
      drained: true,
    });
  });
});
