import { describe, expect, it } from "vitest";
import { settlementsSpec } from "./test-specs";
import { validateSpec } from "./validate-spec";
import type { TSpecError } from "./errors";

function errorsOf(spec: unknown): TSpecError[] {
  const result = validateSpec(spec);
  if (result.ok) throw new Error("expected the spec to be invalid");
  return result.errors;
}

describe("aggregate rules", () => {
  it("accepts a windowed update aggregate and keys its sink by groupBy + window_start", () => {
    const result = validateSpec(settlementsSpec());
    expect(result.ok && result.spec.sink).toEqual({
      postgres: { table: "merchant_settlement_5m", mode: "upsert", key: ["merchant_id", "window_start"] },
    });
    expect(result.ok && result.spec.aggregate?.measures).toEqual({
      settled: { fn: "sum", column: "amount" },
      events: { fn: "count" },
    });
  });

  it("requires eventTime for a window", () => {
    const spec = settlementsSpec();
    delete spec.eventTime;
    spec.dedupe.within = "1h";
    expect(errorsOf(spec)).toEqual([
      {
        path: "aggregate.window",
        message: expect.stringMatching(/windows group rows by event time: add eventTime/),
      },
    ]);
  });

  it("rejects outputMode append without a window, because nothing is ever final", () => {
    const spec = settlementsSpec();
    delete spec.aggregate.window;
    spec.aggregate.outputMode = "append";
    expect(errorsOf(spec)).toContainEqual({
      path: "aggregate.outputMode",
      message: expect.stringMatching(/only a window closed by the watermark is ever final/),
    });
  });

  it("rejects outputMode complete for a windowed (unbounded) result", () => {
    const spec = settlementsSpec();
    spec.aggregate.outputMode = "complete";
    expect(errorsOf(spec)).toContainEqual({
      path: "aggregate.outputMode",
      message: expect.stringMatching(/complete rewrites the whole result.*grows with every window/),
    });
  });

  it("accepts complete for a keyed aggregate without a window", () => {
    const spec = settlementsSpec();
    delete spec.aggregate.window;
    spec.aggregate.outputMode = "complete";
    const result = validateSpec(spec);
    expect(result.ok && result.spec.sink).toEqual({
      postgres: { table: "merchant_settlement_5m", mode: "upsert", key: ["merchant_id"] },
    });
  });

  it("requires groupBy when there is no window", () => {
    const spec = settlementsSpec();
    delete spec.aggregate.window;
    spec.aggregate.groupBy = [];
    expect(errorsOf(spec)).toContainEqual({
      path: "aggregate.groupBy",
      message: expect.stringMatching(/keyed by its groupBy columns/),
    });
  });

  it("requires groupBy columns to be contract fields", () => {
    const spec = settlementsSpec();
    spec.aggregate.groupBy = ["merchant"];
    expect(errorsOf(spec)).toContainEqual({
      path: "aggregate.groupBy[0]",
      message: expect.stringMatching(/"merchant" is not a contract field, so it cannot be grouped by/),
    });
  });

  it("checks measure columns exist and have a type the function accepts", () => {
    const spec = settlementsSpec();
    spec.aggregate.measures = {
      a: "sum(currency)",
      b: "avg(missing)",
      c: "max(event_time)",
      d: "min(amount)",
    };
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({
      path: "aggregate.measures.a",
      message: expect.stringMatching(/sum\(currency\) needs a numeric field, and currency is string/),
    });
    expect(errors).toContainEqual({
      path: "aggregate.measures.b",
      message: expect.stringMatching(/"missing" is not a contract field/),
    });
    expect(errors.map((e) => e.path)).not.toContain("aggregate.measures.c");
  });

  it("type-checks measure conditions against the contract", () => {
    const spec = settlementsSpec();
    spec.aggregate.measures = {
      refunded: "sum(amount) if type == 'refund'",
      bad: "count() if kind == 'refund'",
      worse: "count() if amount",
    };
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({
      path: "aggregate.measures.bad",
      message: expect.stringMatching(/unknown field "kind"/),
    });
    expect(errors).toContainEqual({
      path: "aggregate.measures.worse",
      message: expect.stringMatching(/returns double, but a condition must return true or false/),
    });
    expect(errors).toHaveLength(2);
  });

  it("accepts the object form of a measure", () => {
    const spec = settlementsSpec();
    spec.aggregate.measures = { refunded: { fn: "sum", column: "amount", if: "type == 'refund'" } };
    expect(validateSpec(spec).ok).toBe(true);
  });

  it("rejects measure names that collide with result columns or are not identifiers", () => {
    const spec = settlementsSpec();
    spec.aggregate.measures = {
      window_start: "count()",
      merchant_id: "count()",
      "Total Amount": "sum(amount)",
    };
    const paths = errorsOf(spec).map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "aggregate.measures.window_start",
        "aggregate.measures.merchant_id",
        'aggregate.measures["Total Amount"]',
      ]),
    );
  });

  it("rejects count_distinct without a window, because its state would grow forever", () => {
    const spec = settlementsSpec();
    delete spec.aggregate.window;
    spec.aggregate.measures = { customers: "count_distinct(customer_id)" };
    expect(errorsOf(spec)).toContainEqual({
      path: "aggregate.measures.customers",
      message: expect.stringMatching(/never evicted and grows forever/),
    });
  });

  it("validates sliding windows: slide ≤ size and dividing it", () => {
    const spec = settlementsSpec();
    spec.aggregate.window = { sliding: { size: "10m", slide: "15m" } };
    expect(errorsOf(spec)).toContainEqual({
      path: "aggregate.window.sliding.slide",
      message: expect.stringMatching(/longer than size/),
    });
    spec.aggregate.window = { sliding: { size: "10m", slide: "3m" } };
    expect(errorsOf(spec)).toContainEqual({
      path: "aggregate.window.sliding.slide",
      message: expect.stringMatching(/not a multiple/),
    });
    spec.aggregate.window = { sliding: { size: "10m", slide: "5m" } };
    expect(validateSpec(spec).ok).toBe(true);
  });

  it("requires exactly one window kind", () => {
    const spec = settlementsSpec();
    spec.aggregate.window = { tumbling: "5m", sliding: { size: "10m", slide: "5m" } };
    expect(errorsOf(spec)).toContainEqual({
      path: "aggregate.window",
      message: expect.stringMatching(/exactly one of tumbling, sliding/),
    });
  });

  it("rejects allowedLateness without a window", () => {
    const spec = settlementsSpec();
    delete spec.aggregate.window;
    spec.aggregate.allowedLateness = "5m";
    expect(errorsOf(spec)).toContainEqual({
      path: "aggregate.allowedLateness",
      message: expect.stringMatching(/applies to windows/),
    });
  });

  it("rejects combining aggregate and cdc", () => {
    const spec = settlementsSpec();
    spec.cdc = { key: ["merchant_id"], sequenceBy: "seq" };
    expect(errorsOf(spec)).toContainEqual({
      path: "cdc",
      message: expect.stringMatching(/aggregate and cdc cannot be combined/),
    });
  });

  it("rejects select together with aggregate", () => {
    const spec = settlementsSpec();
    spec.transform.select = ["merchant_id"];
    expect(errorsOf(spec)).toContainEqual({
      path: "transform.select",
      message: expect.stringMatching(/cannot be combined with aggregate/),
    });
  });

  it("requires an upsert sink keyed by the result key for update mode", () => {
    const spec = settlementsSpec();
    spec.sink.postgres = { table: "merchant_settlement_5m", mode: "append", key: ["merchant_id"] };
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({
      path: "sink.postgres.mode",
      message: expect.stringMatching(/append sink would insert twice: use mode: upsert/),
    });
    expect(errors).toContainEqual({
      path: "sink.postgres.key",
      message: expect.stringMatching(/identified by \[merchant_id, window_start\]/),
    });
  });

  it("requires sink key columns to exist in the output", () => {
    const spec = settlementsSpec();
    spec.sink.postgres.key = ["merchant_id", "window_start", "currency"];
    expect(errorsOf(spec)).toContainEqual({
      path: "sink.postgres.key[2]",
      message: expect.stringMatching(
        /"currency" is not a column of the pipeline's output.*merchant_id, window_start, window_end, events, settled/,
      ),
    });
  });

  it("lets an append-mode aggregate write to an append sink keyed by the result", () => {
    const spec = settlementsSpec();
    spec.aggregate.outputMode = "append";
    const result = validateSpec(spec);
    expect(result.ok && result.spec.sink).toEqual({
      postgres: { table: "merchant_settlement_5m", mode: "append", key: ["merchant_id", "window_start"] },
    });
  });
});
