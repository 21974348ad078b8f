// "Without a watermark the validator refuses unbounded state": the spec combinations the window
// operator could not keep bounded (or correct) never reach the engine.
import { describe, expect, it } from "vitest";
import { validateSpec } from "@sluice/pipeline-spec";

interface TestSpec {
  eventTime?: { column: string; watermarkDelay: string };
  dedupe?: { key: string[]; within: string };
  aggregate?: {
    window?: { tumbling: string };
    groupBy: string[];
    measures: Record<string, string>;
    outputMode: string;
  };
  sink: { postgres: { table: string; mode?: string } };
  [section: string]: unknown;
}

const base: TestSpec = {
  name: "m",
  owner: "t",
  source: { kafka: { topic: "payments" } },
  contract: {
    fields: {
      event_id: "string",
      merchant_id: "string",
      customer_id: "string",
      amount: "decimal",
      event_time: "timestamp",
    },
  },
  eventTime: { column: "event_time", watermarkDelay: "10m" },
  aggregate: {
    window: { tumbling: "5m" },
    groupBy: ["merchant_id"],
    measures: { settled: "sum(amount)" },
    outputMode: "update",
  },
  sink: { postgres: { table: "settlements" } },
};

function errors(patch: (s: TestSpec & { aggregate: NonNullable<TestSpec["aggregate"]> }) => void): string[] {
  const spec = structuredClone(base) as TestSpec & { aggregate: NonNullable<TestSpec["aggregate"]> };
  patch(spec);
  const r = validateSpec(spec);
  return r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`);
}

describe("the validator refuses unbounded or impossible window state", () => {
  it("accepts the bounded baseline", () => expect(errors(() => undefined)).toEqual([]));

  it("a window without a watermark", () => {
    expect(errors((s) => delete s.eventTime).join("\n")).toMatch(
      /aggregate\.window: windows group rows by event time/,
    );
  });
  it("dedupe within the watermark without a watermark", () => {
    expect(
      errors((s) => {
        delete s.eventTime;
        delete (s as TestSpec).aggregate;
        s.dedupe = { key: ["event_id"], within: "watermark" };
      }).join("\n"),
    ).toMatch(/within: watermark needs a watermark/);
  });
  it("append without a window (nothing is ever final)", () => {
    expect(
      errors((s) => {
        delete s.aggregate.window;
        s.aggregate.outputMode = "append";
      }).join("\n"),
    ).toMatch(/outputMode append writes a result once it is final/);
  });
  it("complete over windows (the result grows with every window)", () => {
    expect(errors((s) => (s.aggregate.outputMode = "complete")).join("\n")).toMatch(
      /outputMode complete rewrites the whole result every batch/,
    );
  });
  it("count_distinct without a window (its value set is never evicted)", () => {
    expect(
      errors((s) => {
        delete s.aggregate.window;
        s.aggregate.measures.customers = "count_distinct(customer_id)";
      }).join("\n"),
    ).toMatch(/count_distinct keeps every distinct value/);
  });
  it("an updated window into an append-only sink", () => {
    expect(errors((s) => (s.sink.postgres.mode = "append")).join("\n")).toMatch(/would insert twice/);
  });
});
