import { describe, expect, it } from "vitest";
import { bucketRange, MAX_POINTS, presetRange, RANGE_PRESETS, splitByGrain, ZTimeRange } from "./time-range";

describe("chart buckets", () => {
  it("every preset stays within the point budget with a step that is a whole number of 10-second grains", () => {
    const now = new Date("2026-12-01T10:00:07.000Z");
    const steps = Object.keys(RANGE_PRESETS).map((p) => {
      const b = bucketRange(presetRange(p as keyof typeof RANGE_PRESETS, now));
      expect(b.starts.length).toBeLessThanOrEqual(MAX_POINTS + 1);
      expect(b.stepSeconds % 10).toBe(0);
      return b.stepSeconds;
    });
    expect(steps).toEqual([10, 10, 60, 300, 1800]);
    // Steps of whole minutes read the 60-second rollups.
    expect(Object.keys(RANGE_PRESETS).map((p) => bucketRange(presetRange(p as keyof typeof RANGE_PRESETS, now)).grain)).toEqual([10, 10, 60, 60, 60]);
  });

  it("a range's totals take its whole minutes from the coarse grain and its edges from the fine one", () => {
    expect(splitByGrain(new Date("2026-12-01T10:00:20Z"), new Date("2026-12-01T10:05:40Z"))).toEqual({ coarseFrom: new Date("2026-12-01T10:01:00Z"), coarseTo: new Date("2026-12-01T10:05:00Z") });
    // Less than a whole minute inside: all from the fine grain.
    const from = new Date("2026-12-01T10:00:20Z");
    expect(splitByGrain(from, new Date("2026-12-01T10:00:50Z"))).toEqual({ coarseFrom: from, coarseTo: from });
  });

  it("buckets are aligned to the step, start at or before the range and cover it without holes", () => {
    const b = bucketRange({ from: new Date("2026-12-01T10:00:07.000Z"), to: new Date("2026-12-01T10:15:07.000Z") });
    expect(b.from).toEqual(new Date("2026-12-01T10:00:00.000Z"));
    expect(b.starts).toHaveLength(91);
    expect(b.starts.at(-1)).toEqual(new Date("2026-12-01T10:15:00.000Z"));
    for (let i = 1; i < b.starts.length; i++) expect(b.starts[i]!.getTime() - b.starts[i - 1]!.getTime()).toBe(10_000);
  });

  it("refuses a backwards or too long range with a message that says what to do", () => {
    expect(ZTimeRange.safeParse({ from: "2026-12-02", to: "2026-12-01" }).error?.issues[0]?.message).toMatch(/end after it starts/);
    expect(ZTimeRange.safeParse({ from: "2026-01-01", to: "2026-12-01" }).error?.issues[0]?.message).toMatch(/at most 31 days/);
  });
});
