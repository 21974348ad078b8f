import { describe, expect, it } from "vitest";
import { backlogAfter, planBatch, startingOffsets } from "./plan-batch";

const parts = (...highs: number[]) => highs.map((high, partition) => ({ partition, low: 0, high }));
const size = (ranges: { from: number; to: number }[]) => ranges.reduce((s, r) => s + r.to - r.from, 0);

describe("planning a batch", () => {
  it("never plans more than maxOffsetsPerTrigger, spread over partitions by backlog", () => {
    const { ranges } = planBatch({
      committedEnd: {},
      partitions: parts(100_000, 50_000, 50_000),
      maxOffsetsPerTrigger: 20_000,
    });
    expect(size(ranges)).toBe(20_000);
    expect(ranges.map((r) => r.to - r.from)).toEqual([10_000, 5_000, 5_000]);
  });

  it("resumes each partition where the last committed batch ended", () => {
    const { ranges } = planBatch({
      committedEnd: { "0": 40, "1": 7 },
      partitions: parts(50, 10),
      maxOffsetsPerTrigger: 1000,
    });
    expect(ranges).toEqual([
      { partition: 0, from: 40, to: 50 },
      { partition: 1, from: 7, to: 10 },
    ]);
  });

  it("reads a partition the checkpoint does not name from its earliest offset (never read, or added to the topic later)", () => {
    const partitions = [
      { partition: 0, low: 5, high: 20 },
      { partition: 1, low: 0, high: 4 },
    ];
    expect(planBatch({ committedEnd: { "0": 20 }, partitions, maxOffsetsPerTrigger: 100 }).ranges).toEqual([
      { partition: 0, from: 20, to: 20 },
      { partition: 1, from: 0, to: 4 },
    ]);
  });

  it("latest starts each partition at its log end now; earliest records nothing", () => {
    const partitions = [
      { partition: 0, low: 5, high: 20 },
      { partition: 1, low: 0, high: 0 },
    ];
    expect(startingOffsets("latest", partitions)).toEqual({ "0": 20, "1": 0 });
    expect(startingOffsets("earliest", partitions)).toBeUndefined();
  });

  it("reports offsets that retention deleted before they were read instead of hiding them", () => {
    const plan = planBatch({
      committedEnd: { "0": 3 },
      partitions: [{ partition: 0, low: 10, high: 12 }],
      maxOffsetsPerTrigger: 100,
    });
    expect(plan.skipped).toEqual({ "0": 7 });
    expect(plan.ranges[0]).toEqual({ partition: 0, from: 10, to: 12 });
  });

  it("hands the rounding remainder out so the cap is used exactly", () => {
    const { ranges } = planBatch({
      committedEnd: {},
      partitions: parts(10, 10, 10),
      maxOffsetsPerTrigger: 10,
    });
    expect(size(ranges)).toBe(10);
    expect(backlogAfter(ranges, parts(10, 10, 10))).toBe(20);
  });

  it("plans an empty batch when caught up", () => {
    const { ranges } = planBatch({
      committedEnd: { "0": 10 },
      partitions: parts(10),
      maxOffsetsPerTrigger: 10,
    });
    expect(size(ranges)).toBe(0);
  });
});
