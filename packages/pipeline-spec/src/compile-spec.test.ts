import { describe, expect, it } from "vitest";
import { compileSpec } from "./compile-spec";
import { SpecValidationError } from "./errors";
import { settlementsSpec, cdcSpec } from "./test-specs";
import { validateSpec } from "./validate-spec";
import type { TPipelineSpec } from "./spec-schema";

function valid(spec: unknown): TPipelineSpec {
  const result = validateSpec(spec);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.spec;
}

const event = {
  event_id: "e1",
  type: "refund",
  merchant_id: "m1",
  customer_id: "c1",
  seq: 3,
  amount: "12.50",
  currency: "USD",
  event_time: "2025-01-01T23:58:00.000Z",
};

describe("compileSpec", () => {
  it("compiles the filter, expectations and measure conditions once, for per-row use", () => {
    const spec = settlementsSpec();
    spec.aggregate.measures.refunded = "sum(amount) if type == 'refund'";
    spec.expectations.push({ name: "known_currency", expr: "currency in ['USD', 'EUR']", action: "warn" });
    const compiled = compileSpec(valid(spec));
    const row = compiled.toCelRow(event);
    expect(compiled.filter?.test(row)).toBe(true);
    expect(compiled.expectations.map((e) => [e.name, e.action, e.test(row)])).toEqual([
      ["positive_amount", "drop", true],
      ["known_currency", "warn", true],
    ]);
    expect(compiled.measures.map((m) => [m.name, m.fn, m.column, m.condition?.test(row)])).toEqual([
      ["events", "count", undefined, undefined],
      ["refunded", "sum", "amount", true],
      ["settled", "sum", "amount", undefined],
    ]);
    const negative = compiled.toCelRow({ ...event, type: "settlement", amount: "-1.00", currency: "JPY" });
    expect(compiled.expectations.map((e) => e.test(negative))).toEqual([false, false]);
    expect(compiled.measures[1]?.condition?.test(negative)).toBe(false);
  });

  it("converts only the fields expressions read", () => {
    const compiled = compileSpec(valid(settlementsSpec()));
    expect([...compiled.fieldsUsed].sort()).toEqual(["amount", "type"]);
    expect(Object.keys(compiled.toCelRow(event)).sort()).toEqual(["_type", "amount"]);
  });

  it("exposes the spec's durations in milliseconds", () => {
    expect(compileSpec(valid(settlementsSpec())).timing).toEqual({
      watermarkDelayMs: 600_000,
      idleTimeoutMs: 60_000,
      windowSizeMs: 300_000,
      windowSlideMs: 300_000,
      allowedLatenessMs: 0,
      triggerEveryMs: 2_000,
    });
  });

  it("compiles a cdc delete condition", () => {
    const compiled = compileSpec(valid(cdcSpec()));
    expect(
      compiled.deleteWhen?.test(
        compiled.toCelRow({ customer_id: "c1", status: "closed", op: "D", version: 4 }),
      ),
    ).toBe(true);
    expect(
      compiled.deleteWhen?.test(
        compiled.toCelRow({ customer_id: "c1", status: "active", op: "U", version: 5 }),
      ),
    ).toBe(false);
  });

  it("refuses a spec whose expressions do not type-check", () => {
    const spec = valid(settlementsSpec());
    const broken = {
      ...spec,
      expectations: [{ name: "bad", expr: "amount > 'x'", action: "warn" as const }],
    };
    expect(() => compileSpec(broken)).toThrow(SpecValidationError);
  });
});
