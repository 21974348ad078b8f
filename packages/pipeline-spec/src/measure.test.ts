import { describe, expect, it } from "vitest";
import { formatMeasure, parseMeasure } from "./measure";

describe("measures", () => {
  it("parses each function and an optional condition", () => {
    expect(parseMeasure("sum(amount)")).toEqual({ fn: "sum", column: "amount" });
    expect(parseMeasure("count()")).toEqual({ fn: "count" });
    expect(parseMeasure(" count_distinct( customer_id ) ")).toEqual({
      fn: "count_distinct",
      column: "customer_id",
    });
    expect(parseMeasure("sum(amount) if type == 'refund'")).toEqual({
      fn: "sum",
      column: "amount",
      if: "type == 'refund'",
    });
    expect(parseMeasure("max(event_time) if amount > 10.0 && currency == 'USD'")).toMatchObject({
      if: "amount > 10.0 && currency == 'USD'",
    });
  });

  it.each([
    ["median(amount)", /not a measure function/],
    ["sum()", /needs a column/],
    ["count(amount)", /use count\(\) for rows, or count_distinct\(amount\)/],
    ["sum(amount) if", /"if" without a condition/],
    ["amount", /not a measure/],
  ])("rejects %j", (text, message) => {
    const parsed = parseMeasure(text);
    expect("problem" in parsed && parsed.problem).toMatch(message);
  });

  it("formats the canonical object back to text", () => {
    expect(formatMeasure({ fn: "sum", column: "amount", if: "type == 'refund'" })).toBe(
      "sum(amount) if type == 'refund'",
    );
    expect(formatMeasure({ fn: "count" })).toBe("count()");
  });
});
