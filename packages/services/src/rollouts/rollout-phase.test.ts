import { describe, expect, it } from "vitest";
import { rolloutPhase, rolloutProgress, summarizeReconciliations, type TPhaseInput } from "./rollout-phase";

describe("rolloutProgress", () => {
  it("measures green against what blue read since green's start, per partition", () => {
    const p = rolloutProgress({ "0": 100, "1": 0 }, { "0": 300, "1": 200 }, { "0": 250, "1": 50 });
    expect(p).toEqual({ greenRead: 200, blueRead: 400, percent: 50, caughtUp: false });
  });
  it("is 100 only when every partition is caught up; a partition behind keeps it below", () => {
    expect(rolloutProgress({ "0": 0 }, { "0": 10 }, { "0": 12 }).percent).toBe(100);
    const almost = rolloutProgress({ "0": 0, "1": 0 }, { "0": 1000, "1": 1000 }, { "0": 1999, "1": 999 });
    expect(almost.caughtUp).toBe(false);
    expect(almost.percent).toBe(99);
  });
  it("a green that started where blue stands is caught up; a partition green has not read counts from its start", () => {
    expect(rolloutProgress({ "0": 5 }, { "0": 5 }, {})).toMatchObject({ percent: 100, caughtUp: true });
    expect(rolloutProgress({ "0": 0, "1": 0 }, { "0": 10, "1": 10 }, { "0": 10 })).toMatchObject({
      percent: 50,
      caughtUp: false,
    });
  });
});

const base: TPhaseInput = {
  state: "running",
  greenVersion: 2,
  greenStatus: "running",
  progress: { greenRead: 62, blueRead: 100, percent: 62, caughtUp: false },
  reconciliation: null,
  promotionRequestId: null,
};
const caughtUp = { greenRead: 100, blueRead: 100, percent: 100, caughtUp: true };

describe("rolloutPhase", () => {
  it("catching up, then waiting for a reconciliation, then ready", () => {
    expect(rolloutPhase(base)).toEqual({ phase: "catching_up", label: "green catching up 62%" });
    expect(rolloutPhase({ ...base, progress: caughtUp }).phase).toBe("reconciling");
    const clean = { status: "compared", onlyBlue: 0, onlyGreen: 0, differing: 0 };
    expect(rolloutPhase({ ...base, progress: caughtUp, reconciliation: clean })).toEqual({
      phase: "ready",
      label: "ready to promote",
    });
    // Clean so far is not ready while green is behind.
    expect(rolloutPhase({ ...base, reconciliation: clean }).phase).toBe("catching_up");
  });
  it("differences show while green is still catching up, counted in words", () => {
    expect(
      rolloutPhase({
        ...base,
        reconciliation: { status: "compared", onlyBlue: 3, onlyGreen: 0, differing: 412 },
      }),
    ).toEqual({ phase: "differences", label: "differences found: 412 keys differ, 3 keys only in blue" });
  });
  it("a failed green, a pending promotion and a finished rollout say so first", () => {
    expect(rolloutPhase({ ...base, greenStatus: "failed" }).label).toBe("green (v2) failed");
    expect(rolloutPhase({ ...base, promotionRequestId: "7" }).label).toBe(
      "promotion requested (change request #7)",
    );
    expect(rolloutPhase({ ...base, state: "promoted" }).label).toBe("promoted: v2 serves");
    expect(rolloutPhase({ ...base, state: "aborted" }).phase).toBe("aborted");
  });
});

describe("summarizeReconciliations", () => {
  const clean = { status: "compared", onlyBlue: 0, onlyGreen: 0, differing: 0 };
  it("is compared only when every output is; differences in any output show even while another waits", () => {
    expect(summarizeReconciliations([])).toBeNull();
    expect(summarizeReconciliations([clean, clean])).toEqual(clean);
    expect(
      summarizeReconciliations([
        clean,
        { status: "waiting", onlyBlue: null, onlyGreen: null, differing: null },
      ])?.status,
    ).toBe("waiting");
    expect(
      summarizeReconciliations([
        { status: "waiting", onlyBlue: null, onlyGreen: null, differing: null },
        { status: "compared", onlyBlue: 0, onlyGreen: 2, differing: 5 },
      ]),
    ).toEqual({ status: "compared", onlyBlue: 0, onlyGreen: 2, differing: 5 });
  });
});
