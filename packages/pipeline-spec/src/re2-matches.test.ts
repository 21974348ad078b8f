import { describe, expect, it } from "vitest";
import { celEnvironmentFor } from "./cel-environment";
import { toCelRow } from "./cel-row";
import type { TContract } from "./contract";
import { compilePredicate, expressionProblem } from "./expressions";

const contract: Pick<TContract, "fields"> = {
  fields: {
    event_id: { type: "string", optional: false },
    type: { type: "string", optional: false },
    pattern: { type: "string", optional: true },
  },
};
const env = celEnvironmentFor(contract);
const row = (values: Record<string, unknown>) =>
  toCelRow({ event_id: "e1", type: "refund", ...values }, contract);
const test = (expr: string, values: Record<string, unknown>) => {
  expect(expressionProblem(expr, env, "filter")).toBeUndefined();
  return compilePredicate(expr, env).test(row(values));
};

/** The fastest of `rounds` timings of `evaluate`, in ms: the machine's noise only ever adds time. */
function fastest(evaluate: () => void, rounds = 5): number {
  let best = Infinity;
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    evaluate();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

describe("matches(): RE2 semantics", () => {
  it("redos: the hostile pattern from the probe grows linearly with the input, not exponentially", () => {
    const hostile = compilePredicate("(event_id + 'aaa').matches('^([a-z0-9_]+)+!$')", env);
    const timeFor = (n: number) => {
      const r = row({ event_id: "a".repeat(n) });
      return fastest(() => {
        for (let i = 0; i < 10; i++) expect(hostile.test(r)).toBe(false);
      });
    };
    // A backtracking engine takes 2^10 = 1024 times as long for 10 more characters; RE2 about twice.
    const short = timeFor(12);
    const long = timeFor(22);
    expect(long / Math.max(short, 0.01)).toBeLessThan(16);
  });

  it("keeps CEL's meaning: a partial match unless anchored, also on patterns computed per row", () => {
    expect(test("event_id.matches('vt_')", { event_id: "evt_1" })).toBe(true);
    expect(test("event_id.matches('^vt_')", { event_id: "evt_1" })).toBe(false);
    expect(test("event_id.matches('^evt_[0-9]+$')", { event_id: "evt_12" })).toBe(true);
    expect(test("(type + '!').matches(\"^refund!$\") && type.matches ( 'und' )", {})).toBe(true);
    expect(test("event_id.matches(pattern)", { event_id: "evt_1", pattern: "^e.t" })).toBe(true);
    // The word inside a string literal is not a call.
    expect(test("type == 'matches' || 'matches(x)'.matches('tch')", {})).toBe(true);
  });

  it("refuses a pattern RE2 does not accept at validation, naming it and the syntax", () => {
    for (const pattern of ["^(?=evt)", "(a)\\\\1", "(?<!x)y"]) {
      expect(expressionProblem(`event_id.matches('${pattern}')`, env, "filter")).toMatch(
        /is not an RE2 regular expression: .*specs accept RE2 syntax/,
      );
    }
  });

  it("a pattern computed per row that RE2 refuses makes that row's expression false, with a readable error", () => {
    const p = compilePredicate("event_id.matches(pattern)", env);
    expect(p.test(row({ pattern: "(?=e)" }))).toBe(false);
    const outcome = p.evaluate(row({ pattern: "(?=e)" }));
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.error).toMatch(/invalid regular expression "\(\?=e\)" \(RE2 syntax\)/);
    expect(!outcome.ok && outcome.error).not.toContain("re2Matches");
  });

  it("type errors still name matches()", () => {
    expect(expressionProblem("event_id.matches(1)", env, "filter")).toMatch(/matches/);
    expect(expressionProblem("event_id.matches(1)", env, "filter")).not.toMatch(/re2Matches/);
  });
});
