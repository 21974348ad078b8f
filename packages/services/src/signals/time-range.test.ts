import { describe, expect, it } from "vitest";
import {
  bucketRange,
  chartSegments,
  grainFor,
  MAX_POINTS,
  presetRange,
  RANGE_PRESETS,
  splitByGrain,
  ZTimeRange,
} from "./time-range";

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
    // The coarsest grain that divides the step: minutes for 6 h, 5 minutes for 24 h and 7 d.
    expect(
      Object.keys(RANGE_PRESETS).map(
        (p) => bucketRange(presetRange(p as keyof typeof RANGE_PRESETS, now)).grain,
      ),
    ).toEqual([10, 10, 60, 300, 300]);
    expect([10, 30, 60, 120, 300, 600, 900, 1800, 86_400].map(grainFor)).toEqual([
      10, 10, 60, 60, 300, 300, 300, 300, 300,
    ]);
  });

  it("a range's totals take each part from the coarsest grain that fits it: 5 minutes inside, whole minutes beside them, the edges at 10 s", () => {
    const d = (hms: string) => new Date(`2026-12-01T${hms}Z`);
    const seg = (grain: number, from: string, to: string) => ({ grain, from: d(from), to: d(to) });
    expect(splitByGrain(d("10:00:20"), d("10:17:40"))).toEqual([
      seg(10, "10:00:20", "10:01:00"),
      seg(60, "10:01:00", "10:05:00"),
      seg(300, "10:05:00", "10:15:00"),
      seg(60, "10:15:00", "10:17:00"),
      seg(10, "10:17:00", "10:17:40"),
    ]);
    // Aligned ends: no empty edge segments.
    expect(splitByGrain(d("10:00:00"), d("10:10:00"))).toEqual([seg(300, "10:00:00", "10:10:00")]);
    // No whole 5 minutes inside: minutes and edges.
    expect(splitByGrain(d("10:00:20"), d("10:05:40"))).toEqual([
      seg(10, "10:00:20", "10:01:00"),
      seg(60, "10:01:00", "10:05:00"),
      seg(10, "10:05:00", "10:05:40"),
    ]);
    // Less than a whole minute inside: all from the fine grain; an empty range: nothing.
    expect(splitByGrain(d("10:00:20"), d("10:00:50"))).toEqual([seg(10, "10:00:20", "10:00:50")]);
    expect(splitByGrain(d("10:00:20"), d("10:00:20"))).toEqual([]);
  });

  it("a chart reads whole buckets of its grain and the last, partial 5-minute bucket from the minute grain, never the 10-second one", () => {
    const d = (iso: string) => new Date(`2026-12-01T${iso}Z`);
    const day = bucketRange({ from: d("10:07:30"), to: new Date(d("10:07:30").getTime() + 86_400_000) });
    expect(day).toMatchObject({ stepSeconds: 300, grain: 300, from: d("10:05:00") });
    expect(chartSegments(day)).toEqual([
      { grain: 300, from: d("10:05:00"), to: new Date(d("10:05:00").getTime() + 86_400_000) },
      { grain: 60, from: new Date(d("10:05:00").getTime() + 86_400_000), to: day.to },
    ]);
    // From an earlier start (the offset queries read one step before the range).
    expect(chartSegments(day, d("10:00:00"))[0]).toEqual({
      grain: 300,
      from: d("10:00:00"),
      to: new Date(d("10:05:00").getTime() + 86_400_000),
    });
    const hour = bucketRange({ from: d("10:00:07"), to: d("11:00:07") });
    expect(chartSegments(hour)).toEqual([{ grain: 10, from: d("10:00:00"), to: d("11:00:07") }]);
    const six = bucketRange({ from: d("04:00:07"), to: d("10:00:07") });
    expect(chartSegments(six)).toEqual([{ grain: 60, from: d("04:00:00"), to: d("10:00:07") }]);
  });

  it("buckets are aligned to the step, start at or before the range and cover it without holes", () => {
    const b = bucketRange({
      from: new Date("2026-12-01T10:00:07.000Z"),
      to: new Date("2026-12-01T10:15:07.000Z"),
    });
    expect(b.from).toEqual(new Date("2026-12-01T10:00:00.000Z"));
    expect(b.starts).toHaveLength(91);
    expect(b.starts.at(-1)).toEqual(new Date("2026-12-01T10:15:00.000Z"));
    for (let i = 1; i < b.starts.length; i++)
      expect(b.starts[i]!.getTime() - b.starts[i - 1]!.getTime()).toBe(10_000);
  });

  it("refuses a backwards or too long range with a message that says what to do", () => {
    expect(ZTimeRange.safeParse({ from: "2026-12-02", to: "2026-12-01" }).error?.issues[0]?.message).toMatch(
      /end after it starts/,
    );
    expect(ZTimeRange.safeParse({ from: "2026-01-01", to: "2026-12-01" }).error?.issues[0]?.message).toMatch(
      /at most 31 days/,
    );
  });
});
