import { describe, expect, it } from "vitest";
import { batchProgressView } from "./batch-progress-view";
import { joinProgressView, outputProgressViews } from "./combine-progress-view";

const output = (name: string, sink: string, late: number) => ({
  name,
  sink,
  watermark: "2026-01-01T00:10:00.000Z",
  outcomes: {
    rows: 10,
    sink: 10 - late,
    filtered: 0,
    late,
    duplicate: 0,
    stale: 0,
    deadLetter: 0,
    dropped: {},
  },
  lateAccepted: 1,
  expectations: { known_currency: 2 },
  stateRows: 4,
  stateBytes: 400,
  operator: { kind: "window", windowsUpdated: 3, nested: { no: 1 } },
});

const join = {
  kind: "join",
  joined: 5,
  joinedAtBound: 2,
  missing: 1,
  deadLettered: 0,
  held: 3,
  released: 4,
  waiting: 6,
  waitingBytes: 1200,
  versions: 50,
  versionsBytes: 5000,
  versionsEvicted: 0,
  changes: 7,
  repeats: 1,
  lateChanges: 0,
  rejected: 0,
  dimensionRecords: 8,
  dimensionBacklog: 0,
  dimensionWatermark: "2026-01-01T00:05:00.000Z",
};

describe("a combining pipeline's batch, for people", () => {
  it("reads each output with its own watermark, outcomes (its own late count) and state", () => {
    const views = outputProgressViews([
      output("finance", "merchant_finance_5m", 0),
      output("fraud", "merchant_fraud_5m", 3),
    ]);
    expect(views.map((v) => [v.name, v.sink, v.outcomes.late, v.outcomes.sink, v.stateRows])).toEqual([
      ["finance", "merchant_finance_5m", 0, 10, 4],
      ["fraud", "merchant_fraud_5m", 3, 7, 4],
    ]);
    expect(views[1]).toMatchObject({
      watermark: new Date("2026-01-01T00:10:00.000Z"),
      rows: 10,
      lateAccepted: 1,
      expectations: { known_currency: 2 },
      stateBytes: 400,
      operator: { kind: "window", windowsUpdated: 3 },
      outcomes: { dropped: {} },
    });
  });

  it("reads the join's counts, waiting rows and bytes, and the dimension's watermark", () => {
    expect(joinProgressView(join)).toMatchObject({
      joined: 5,
      joinedAtBound: 2,
      missing: 1,
      deadLettered: 0,
      waiting: 6,
      waitingBytes: 1200,
      dimensionWatermark: new Date("2026-01-01T00:05:00.000Z"),
    });
  });

  it("is lenient: no outputs or join reads as none, a malformed count as 0", () => {
    expect(outputProgressViews(undefined)).toEqual([]);
    expect(outputProgressViews([{ name: "x", outcomes: { sink: -1, late: "2" } }])[0]).toMatchObject({
      name: "x",
      sink: "",
      watermark: null,
      outcomes: { sink: 0, late: 0, dropped: {} },
    });
    expect(joinProgressView(undefined)).toBeNull();
    expect(joinProgressView({ joined: 1 })).toBeNull();
    expect(joinProgressView({ kind: "join", joined: 1.5, dimensionWatermark: null })).toMatchObject({
      joined: 0,
      dimensionWatermark: null,
    });
  });

  it("comes with the batch's view; a pipeline with one sink and no join has neither", () => {
    const row = (progress: object) => ({
      batchId: 3n,
      committedAt: new Date("2026-01-01T00:11:00.000Z"),
      inputRows: 10,
      sinkRows: 10,
      outcomes: {},
      progress,
    });
    const combined = batchProgressView(row({ outputs: [output("fraud", "merchant_fraud_5m", 3)], join }));
    expect(combined.outputs.map((o) => o.name)).toEqual(["fraud"]);
    expect(combined.join?.waiting).toBe(6);
    const plain = batchProgressView(row({}));
    expect(plain.outputs).toEqual([]);
    expect(plain.join).toBeNull();
  });
});
