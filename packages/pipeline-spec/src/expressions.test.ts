import { describe, expect, it } from "vitest";
import { celEnvironmentFor } from "./cel-environment";
import { celRowConverter, toCelRow } from "./cel-row";
import { compilePredicate, expressionProblem, fieldsUsedBy } from "./expressions";
import type { TContract } from "./contract";

const contract: Pick<TContract, "fields"> = {
  fields: {
    event_id: { type: "string", optional: false },
    type: { type: "string", optional: false },
    seq: { type: "int", optional: false },
    amount: { type: "decimal", optional: false },
    fx_rate: { type: "double", optional: true },
    currency: { type: "string", optional: false },
    card_country: { type: "string", optional: true },
    is_test: { type: "boolean", optional: false },
    event_time: { type: "timestamp", optional: false },
    payload: { type: "json", optional: true },
  },
};
const env = celEnvironmentFor(contract);
const row = (values: Record<string, unknown>) =>
  toCelRow(
    {
      event_id: "e1",
      type: "refund",
      seq: 7,
      amount: "42.10",
      currency: "USD",
      is_test: false,
      event_time: "2025-01-01T23:58:00.000Z",
      ...values,
    },
    contract,
  );
const check = (expr: string) => expressionProblem(expr, env, "expectation");
const run = (expr: string, values: Record<string, unknown> = {}) => {
  expect(check(expr)).toBeUndefined();
  return compilePredicate(expr, env).test(row(values));
};

describe("expressions: type-checked against the contract", () => {
  it("accepts boolean expressions over contract fields", () => {
    for (const expr of [
      "amount > 0",
      "amount == 0",
      "seq == 1.0",
      "currency in ['USD', 'EUR', 'GBP']",
      "type in ['settlement', 'refund']",
      "card_country == null || card_country.matches('^[A-Z]{2}$')",
      "event_time > timestamp('2025-01-01T00:00:00Z')",
      "!is_test && size(event_id) > 0",
      "payload.source == 'pos'",
    ]) {
      expect(check(expr), expr).toBeUndefined();
    }
  });

  it("reports an unknown field with the fields that exist", () => {
    expect(check("merchant_id != ''")).toMatch(
      /^unknown field "merchant_id" at column 1 in "merchant_id != ''": expressions can use the contract's fields \(amount, card_country,/,
    );
  });

  it("reports a type error with the library's message and a hint", () => {
    expect(check("amount > 'x'")).toMatch(
      /^type error: no such overload: double > string at column 1 in "amount > 'x'" \(decimal and double fields are numbers/,
    );
    expect(check("card_country > 5")).toMatch(/type error: no such overload: string > int/);
    expect(check("amount * 2 > 10.0")).toMatch(/write 1.0 rather than 1/);
  });

  it("rejects an expression that does not return a boolean", () => {
    expect(check("amount + 1.0")).toMatch(/returns double, but an expectation must return true or false/);
    expect(expressionProblem("currency", env, "filter")).toMatch(/a filter must return true or false/);
  });

  it("reports syntax errors with their column", () => {
    expect(check("amount >")).toMatch(/^syntax error: .* at column 9 in "amount >"/);
  });

  it("keeps the user's field name in messages when it shadows a CEL name (type)", () => {
    expect(check("type > 1")).toMatch(/string > int/);
    expect(check("type + 1 == 'x' && nope")).not.toMatch(/_type/);
  });
});

describe("expressions: evaluated per row", () => {
  it("evaluates decimals as numbers, ints as integers and timestamps as instants", () => {
    expect(run("amount > 42.0 && amount < 42.2")).toBe(true);
    expect(run("seq == 7 && seq > 6")).toBe(true);
    expect(run("event_time > timestamp('2025-01-01T23:55:00Z') && event_time.getHours() == 23")).toBe(true);
  });

  it("evaluates a field named type (a CEL type name) as the field", () => {
    expect(run("type == 'refund'")).toBe(true);
    expect(run("type in ['settlement']")).toBe(false);
  });

  it("treats a missing optional field as null", () => {
    expect(run("card_country == null")).toBe(true);
    expect(run("card_country == null", { card_country: "US" })).toBe(false);
    expect(run("card_country == 'US'")).toBe(false);
    expect(run("card_country == 'US'", { card_country: "US" })).toBe(true);
  });

  it("counts a run-time error (a null optional used in a call) as not true, and says why", () => {
    const predicate = compilePredicate("card_country.startsWith('U')", env);
    expect(predicate.test(row({}))).toBe(false);
    const outcome = predicate.evaluate(row({}));
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.error).toMatch(/startsWith/);
    expect(predicate.test(row({ card_country: "US" }))).toBe(true);
  });

  it("reads json fields as maps", () => {
    expect(
      run("payload.source == 'pos' && payload.attempt == 2", { payload: { source: "pos", attempt: 2 } }),
    ).toBe(true);
  });
});

describe("toCelRow", () => {
  it("converts contract-typed values to CEL values", () => {
    const converted = toCelRow(
      {
        event_id: "e1",
        type: "refund",
        seq: 7,
        amount: "42.10",
        fx_rate: 1.1,
        currency: "USD",
        is_test: true,
        event_time: "2025-01-01T00:00:00.000Z",
      },
      contract,
    );
    expect(converted).toEqual({
      event_id: "e1",
      _type: "refund",
      seq: 7n,
      amount: 42.1,
      fx_rate: 1.1,
      currency: "USD",
      card_country: null,
      is_test: true,
      event_time: new Date("2025-01-01T00:00:00.000Z"),
      payload: null,
    });
  });

  it("accepts bigint and numeric-string ints, epoch-ms and Date timestamps", () => {
    const converter = celRowConverter(contract, ["seq", "event_time"]);
    const at = new Date(1_700_000_000_000);
    expect(converter({ seq: "12", event_time: 1_700_000_000_000 })).toEqual({ seq: 12n, event_time: at });
    expect(converter({ seq: 12n, event_time: at })).toEqual({ seq: 12n, event_time: at });
  });

  it("lists the fields an expression reads", () => {
    expect(fieldsUsedBy("type == 'refund' && amount > 0 && [1, 2].exists(x, x == seq)", env).sort()).toEqual([
      "amount",
      "seq",
      "type",
    ]);
  });
});
