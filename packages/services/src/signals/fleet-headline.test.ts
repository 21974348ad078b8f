// The fleet headline never says "all healthy" while a row shows something red or a firing alert —
// the case on-call found: merchant settlements with "1 firing" and violations over target under "ALL HEALTHY".
import { describe, expect, it } from "vitest";
import { fleetHeadline, type THeadlineRow } from "./fleet-headline";

const row = (name: string, over: Partial<THeadlineRow> = {}): THeadlineRow => ({
  name,
  status: "running",
  backlog: 0,
  backlogSeconds: 0,
  freshness: { ingestAgeMs: 1000, targetMs: 300_000 },
  violationRate: 0.001,
  violationTarget: 0.01,
  ...over,
});

describe("the fleet headline", () => {
  it("is healthy only when nothing in any row is red and nothing fires", () => {
    expect(fleetHeadline([row("a"), row("b")], [])).toEqual({
      tone: "ok",
      text: "all healthy",
      attention: [],
    });
  });

  it("counts a running pipeline with a firing alert and violations over target", () => {
    const h = fleetHeadline(
      [row("ledger"), row("merchant-settlements", { violationRate: 0.0275 })],
      [{ pipeline: "merchant-settlements", firing: 1, acknowledged: 0 }],
    );
    expect(h).toEqual({
      tone: "bad",
      text: "1 pipeline needs attention: 1 firing alert, 1 with violations over target",
      attention: ["merchant-settlements"],
    });
  });

  it("counts failed, lagging, stale and not-draining rows; acknowledged alerts are said, not hidden", () => {
    const h = fleetHeadline(
      [
        row("f", { status: "failed" }),
        row("l", {
          status: "lagging",
          backlog: 500,
          backlogSeconds: null,
          freshness: { ingestAgeMs: 600_000, targetMs: 300_000 },
        }),
        row("ok"),
      ],
      [{ pipeline: "ok", firing: 0, acknowledged: 2 }],
    );
    expect(h.attention).toEqual(["f", "l"]);
    expect(h.text).toBe(
      "2 pipelines need attention: 1 failed, 1 lagging, 1 with freshness over target, 1 with backlog not draining · 2 alerts acknowledged",
    );
    expect(fleetHeadline([row("ok")], [{ pipeline: "ok", firing: 0, acknowledged: 1 }])).toMatchObject({
      tone: "warn",
      text: "no new problems · 1 alert acknowledged",
    });
  });

  it("counts every firing alert, the fleet's own too, and never says healthy when the alerts are unknown", () => {
    const h = fleetHeadline(
      [row("ledger"), row("settlements")],
      [
        { pipeline: "ledger", firing: 2, acknowledged: 0 },
        { pipeline: null, firing: 1, acknowledged: 0 },
      ],
    );
    expect(h).toEqual({
      tone: "bad",
      text: "1 pipeline needs attention: 3 firing alerts (1 fleet-wide)",
      attention: ["ledger"],
    });
    expect(fleetHeadline([row("ok")], [{ pipeline: null, firing: 1, acknowledged: 0 }]).text).toBe(
      "1 firing alert (1 fleet-wide)",
    );
    expect(fleetHeadline([row("ok")], [], { alertsUnknown: true })).toEqual({
      tone: "warn",
      text: "no problem in the rows · alerts unknown (could not load them)",
      attention: [],
    });
  });

  it("a version that is not serving is its own row: its problems count under name@version, the pipeline's alerts once", () => {
    const h = fleetHeadline(
      [
        row("ledger", { version: 3 }),
        row("ledger", { version: 2, serving: false, status: "failed" }),
        row("ledger", { version: 1, serving: false }),
      ],
      [{ pipeline: "ledger", firing: 1, acknowledged: 1 }],
    );
    expect(h).toEqual({
      tone: "bad",
      text: "2 pipelines need attention: 1 firing alert, 1 failed · 1 alert acknowledged",
      attention: ["ledger", "ledger@2"],
    });
  });
});
