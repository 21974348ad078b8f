import { describe, expect, it } from "vitest";
import { emptyOutcomes, OUTCOMES, totalOutcomes } from "@sluice/engine/outcomes";
import { OUTCOME_COLUMNS, outcomeEntries, outcomeOfColumn } from "./outcome-labels";

describe("outcome labels", () => {
  it("list every outcome of a batch once, dropped spelt out per expectation, adding up to the batch's input", () => {
    const counts = {
      ...emptyOutcomes(),
      sink: 7,
      duplicate: 2,
      deadLetter: 1,
      stale: 3,
      dropped: { no_refunds: 4, tiny: 1 },
    };
    const entries = outcomeEntries(counts);
    expect(entries.map((e) => e.label)).toEqual([
      "sink",
      "duplicate",
      "filtered",
      "quarantined",
      "dead letter",
      "late",
      "stale",
      "dropped by no_refunds",
      "dropped by tiny",
    ]);
    expect(entries.reduce((sum, e) => sum + e.n, 0)).toBe(totalOutcomes(counts));
    expect(entries.find((e) => e.label === "dead letter")?.tone).toBe("warn");
  });

  it("list an output's own outcomes only, in the same order and labels, its late count its own", () => {
    const entries = outcomeEntries({
      sink: 5,
      duplicate: 0,
      filtered: 1,
      late: 2,
      stale: 0,
      deadLetter: 0,
      dropped: { known_currency: 3 },
    });
    expect(entries.map((e) => `${e.label} ${e.n}`)).toEqual([
      "sink 5",
      "duplicate 0",
      "filtered 1",
      "dead letter 0",
      "late 2",
      "stale 0",
      "dropped by known_currency 3",
    ]);
    expect(entries.find((e) => e.label === "late")?.tone).toBe("warn");
  });

  it("show one 'dropped 0' line when no expectation dropped anything", () => {
    const entries = outcomeEntries(emptyOutcomes());
    expect(entries.filter((e) => e.key.startsWith("dropped"))).toEqual([
      { key: "dropped", label: "dropped", n: 0, tone: "idle" },
    ]);
    expect(entries).toHaveLength(OUTCOMES.length);
  });

  it("name a row verdict's outcome by its column spelling, and an unknown one as itself", () => {
    expect(OUTCOME_COLUMNS.map((c) => c.column)).toContain("dead_letter");
    expect(outcomeOfColumn("dead_letter")).toEqual({ label: "dead letter", tone: "warn" });
    expect(outcomeOfColumn("refused")).toEqual({ label: "refused", tone: "warn" });
  });
});
