import { describe, expect, it } from "vitest";
import { compileSpec, validateSpec } from "@sluice/pipeline-spec";
import { measureSet } from "./accumulators";
import { addDecimal, canonicalDecimal, divideDecimal, formatDecimal, parseDecimal } from "./decimal";
import { isFinal, windowsContaining } from "./window-assign";

const at = (iso: string) => new Date(iso).getTime();
const MIN = 60_000;

describe("event-time windows", () => {
  it("a sale at 23:58 published at 00:16 lands in the 23:55 window, not the 00:15 one", () => {
    const [w] = windowsContaining(at("2025-01-01T23:58:00Z"), 5 * MIN, 5 * MIN);
    expect(new Date(w!.start).toISOString()).toBe("2025-01-01T23:55:00.000Z");
    expect(new Date(w!.end).toISOString()).toBe("2025-01-02T00:00:00.000Z");
  });

  it("a sliding window of 10m every 5m puts each row in exactly two windows", () => {
    const ws = windowsContaining(at("2025-01-01T00:07:00Z"), 10 * MIN, 5 * MIN).map((w) =>
      new Date(w.start).toISOString().slice(11, 16),
    );
    expect(ws).toEqual(["00:00", "00:05"]);
    expect(
      windowsContaining(at("2025-01-01T00:05:00Z"), 10 * MIN, 5 * MIN).map((w) =>
        new Date(w.start).toISOString().slice(11, 16),
      ),
    ).toEqual(["00:00", "00:05"]);
  });

  it("a window is final only when the watermark passes its end plus allowedLateness", () => {
    const end = at("2025-01-01T00:05:00Z");
    expect(isFinal(end, new Date(end - 1), 0)).toBe(false);
    expect(isFinal(end, new Date(end), 0)).toBe(true);
    expect(isFinal(end, new Date(end + MIN), 2 * MIN)).toBe(false);
    expect(isFinal(end, null, 0)).toBe(false);
  });
});

describe("exact decimals", () => {
  it("adds without binary rounding", () => {
    expect(formatDecimal(addDecimal(parseDecimal("0.10"), parseDecimal("0.2")))).toBe("0.30");
    expect(formatDecimal(addDecimal(parseDecimal("-27.55"), parseDecimal("3")))).toBe("-24.55");
    expect(formatDecimal(parseDecimal("15e-1"))).toBe("1.5");
  });
  it("divides with half-away-from-zero rounding", () => {
    expect(formatDecimal(divideDecimal(parseDecimal("10.00"), 3, 6))).toBe("3.333333");
    expect(formatDecimal(divideDecimal(parseDecimal("-2.00"), 3, 2))).toBe("-0.67");
  });
  it("has one canonical text per value", () => {
    expect(canonicalDecimal("1.50")).toBe(canonicalDecimal("1.5"));
    expect(canonicalDecimal("100")).toBe("100");
  });
});

describe("measures", () => {
  const spec = validateSpec({
    name: "m",
    owner: "t",
    source: { kafka: { topic: "x" } },
    contract: {
      fields: {
        type: "string",
        merchant_id: "string",
        customer_id: "string",
        amount: "decimal",
        n: "int",
        event_time: "timestamp",
      },
    },
    eventTime: { column: "event_time", watermarkDelay: "1m" },
    aggregate: {
      window: { tumbling: "5m" },
      groupBy: ["merchant_id"],
      measures: {
        total: "sum(amount)",
        refunded: "sum(amount) if type == 'refund'",
        refunds: "count() if type == 'refund'",
        events: "count()",
        customers: "count_distinct(customer_id)",
        smallest: "min(amount)",
        largest: "max(amount)",
        mean: "avg(amount)",
        n_sum: "sum(n)",
        first: "min(event_time)",
      },
    },
    sink: { postgres: { table: "t" } },
  });
  if (!spec.ok) throw new Error(JSON.stringify(spec.errors));
  const compiled = compileSpec(spec.spec);
  const set = measureSet(compiled.measures, spec.spec.contract);
  const row = (type: string, customer: string, amount: string, n: number, t: string) => ({
    type,
    merchant_id: "m1",
    customer_id: customer,
    amount,
    n,
    event_time: new Date(t),
  });
  const fold = (rows: ReturnType<typeof row>[]) => {
    const acc = set.empty();
    for (const r of rows) set.add(acc, r, compiled.toCelRow(r));
    return acc;
  };

  it("folds rows, and merging two partial states equals folding all rows at once", () => {
    const rows = [
      row("settlement", "c1", "10.10", 1, "2025-01-01T00:01:00Z"),
      row("refund", "c2", "2.25", 2, "2025-01-01T00:00:30Z"),
      row("settlement", "c1", "0.20", 3, "2025-01-01T00:03:00Z"),
      row("refund", "c3", "1.00", 4, "2025-01-01T00:04:00Z"),
    ];
    const all = set.results(fold(rows));
    expect(all).toEqual({
      total: "13.55",
      refunded: "3.25",
      refunds: 2,
      events: 4,
      customers: 3,
      smallest: "0.20",
      largest: "10.10",
      mean: "3.387500",
      n_sum: "10",
      first: new Date("2025-01-01T00:00:30Z"),
    });
    // What the first batch stored (merged into empty state, then through JSON), plus a second batch.
    const stored = JSON.parse(JSON.stringify(set.merge(set.empty(), fold(rows.slice(0, 2)))));
    const merged = set.merge(stored, fold(rows.slice(2)));
    expect(set.results(merged)).toEqual(all);
  });

  it("a conditional measure with no matching row is 0 (sum, count) or null (min, max, avg)", () => {
    const r = set.results(fold([row("settlement", "c1", "5.00", 1, "2025-01-01T00:01:00Z")]));
    expect([r.refunded, r.refunds]).toEqual(["0", 0]);
    expect(set.results(set.empty()).mean).toBeNull();
  });
});
