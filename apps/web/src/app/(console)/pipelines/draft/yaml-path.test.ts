import { describe, expect, it } from "vitest";
import { inExpression, keyAt, sectionAt } from "./yaml-path";

const spec = `name: x
source:
  kafka:
    topic: payments
expectations:
  - name: positive
    expr: "amount > 0"
    action: drop
aggregate:
  measures:
    total: sum(amount)`.split("\n");

describe("sectionAt", () => {
  it("finds the section of a key from indentation, list items included", () => {
    expect(sectionAt(spec, 0)).toBe("");
    expect(sectionAt(spec, 3)).toBe("source.kafka");
    expect(sectionAt(spec, 5)).toBe("expectations[]");
    expect(sectionAt(spec, 6)).toBe("expectations[]");
    expect(sectionAt(spec, 10)).toBe("aggregate.measures");
    expect(keyAt(spec[6]!)).toBe("expr");
  });

  it("gives the section of a key being typed (no colon yet)", () => {
    const typing = [...spec.slice(0, 4), "    start"];
    expect(sectionAt(typing, 4)).toBeUndefined();
    expect(sectionAt(typing, 4, { partial: true })).toBe("source.kafka");
  });

  it("knows when the cursor is in an expression", () => {
    expect(inExpression('    expr: "amo', "expectations[]")).toBe(true);
    expect(inExpression("    action: dr", "expectations[]")).toBe(false);
    expect(inExpression("    total: sum(am", "aggregate.measures")).toBe(true);
  });
});
