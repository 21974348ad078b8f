import { describe, expect, it } from "vitest";
import { latencyPercentiles, sortedIngestTimes } from "./latency";
import { buildProgress } from "./progress";
import { emptyOutcomes } from "../batch/outcomes";

describe("end-to-end latency percentiles", () => {
  it("are nearest-rank percentiles of commit time minus each row's Kafka append time", () => {
    // 100 rows appended 1..100 ms before the commit, in scrambled order.
    const commitAt = 1_000_000;
    const times = Array.from({ length: 100 }, (_, i) => commitAt - (((i * 37) % 100) + 1));
    const sorted = sortedIngestTimes(times);
    expect(latencyPercentiles(sorted, commitAt)).toEqual({ p50: 50, p95: 95, p99: 99, max: 100 });
  });

  it("a single row is every percentile; a batch without rows has none", () => {
    expect(latencyPercentiles(sortedIngestTimes([900]), 1000)).toEqual({
      p50: 100,
      p95: 100,
      p99: 100,
      max: 100,
    });
    expect(latencyPercentiles(sortedIngestTimes([]), 1000)).toBeNull();
  });

  it("a producer clock ahead of the committer never gives negative latency", () => {
    expect(latencyPercentiles(sortedIngestTimes([1500, 1200]), 1000)).toEqual({
      p50: 0,
      p95: 0,
      p99: 0,
      max: 0,
    });
  });

  it("the progress record carries them with the newest ingest time, and omits them for an empty batch", () => {
    const base = {
      batchId: 3,
      pipelineVersionId: "v",
      ranges: [],
      partitions: [],
      skippedOffsets: {},
      inputRows: 2,
      phases: { plan: 1, read: 1, process: 1, commit: 1 },
      sincePreviousTriggerMs: undefined,
      watermark: null,
      eventTimeMax: null,
      state: { rows: 0, bytes: 0 },
      outcomes: emptyOutcomes(),
      warnings: {},
      replayed: false,
      now: new Date(10_000),
    };
    const p = buildProgress({ ...base, sortedIngest: sortedIngestTimes([9_000, 7_000]) });
    expect(p.latencyMs).toEqual({ p50: 1000, p95: 3000, p99: 3000, max: 3000 });
    expect(p.ingestTimeMax).toBe(new Date(9_000).toISOString());
    const empty = buildProgress({ ...base, inputRows: 0, sortedIngest: sortedIngestTimes([]) });
    expect(empty).not.toHaveProperty("latencyMs");
    expect(empty).not.toHaveProperty("ingestTimeMax");
  });
});
