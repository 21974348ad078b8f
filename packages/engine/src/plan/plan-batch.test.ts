import { describe, expect, it } from "vitest";
import { backlogAfter, planBatch } from "./plan-batch";

const parts = (...highs: number[]) => highs.map((high, partition) => ({ partition, low: 0, high }));
const size = (ranges: { from: number; to: number }[]) => ranges.reduce((s, r) => s + r.to - r.from, 0);

describe("planning a batch", () => {
  it("never plans more than maxOffsetsPerTrigger, spread over partitions by backlog", () => {
    const { ranges } = planBatch({ committedEnd: {}, partitions: parts(100_000, 50_000, 50_000), startingOffsets: "earliest", maxOffsetsPerTrigger: 20_000 });
    expect(size(ranges)).toBe(20_000);
    expect(ranges.map((r) => r.to - r.from)).toEqual([10_000, 5_000, 5_000]);
  });

  it("resumes each partition where the last committed batch ended", () => {
    const { ranges } = planBatch({ committedEnd: { "0": 40, "1": 7 }, partitions: parts(50, 10), startingOffsets: "earliest", maxOffsetsPerTrigger: 1000 });
    expect(ranges).toEqual([
      { partition: 0, from: 40, to: 50 },
      { partition: 1, from: 7, to: 10 },
    ]);
  });

  it("starts new partitions at the earliest or latest offset as the spec says", () => {
    const partitions = [{ partition: 0, low: 5, high: 20 }];
    expect(planBatch({ committedEnd: {}, partitions, startingOffsets: "earliest", maxOffsetsPerTrigger: 100 }).ranges[0]).toEqual({ partition: 0, from: 5, to: 20 });
    expect(planBatch({ committedEnd: {}, partitions, startingOffsets: "latest", maxOffsetsPerTrigger: 100 }).ranges[0]).toEqual({ partition: 0, from: 20, to: 20 });
  });

  it("reports offsets that retention deleted before they were read instead of hiding them", () => {
    const plan = planBatch({ committedEnd: { "0": 3 }, partitions: [{ partition: 0, low: 10, high: 12 }], startingOffsets: "earliest", maxOffsetsPerTrigger: 100 });
    expect(plan.skipped).toEqual({ "0": 7 });
    expect(plan.ranges[0]).toEqual({ partition: 0, from: 10, to: 12 });
  });

  it("hands the rounding remainder out so the cap is used exactly", () => {
    const { ranges } = planBatch({ committedEnd: {}, partitions: parts(10, 10, 10), startingOffsets: "earliest", maxOffsetsPerTrigger: 10 });
    expect(size(ranges)).toBe(10);
    expect(backlogAfter(ranges, parts(10, 10, 10))).toBe(20);
  });

  it("plans an empty batch when caught up", () => {
    const { ranges } = planBatch({ committedEnd: { "0": 10 }, partitions: parts(10), startingOffsets: "earliest", maxOffsetsPerTrigger: 10 });
    expect(size(ranges)).toBe(0);
  });
});
