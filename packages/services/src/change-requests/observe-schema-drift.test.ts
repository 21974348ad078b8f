// What the engine proposes for the drift it saw: new fields as optional with their inferred types, a
// safe widening for a type mismatch, and no proposal (for a person to edit) when there is none.
import { ledgerSpec } from "@sluice/engine/testing";
import { describe, expect, it } from "vitest";
import { groupForApproval, proposeFromDrift, safeWidening } from "./observe-schema-drift";

const base = ledgerSpec("t");
const field = (over: Record<string, unknown>) => ({
  field: "x",
  outcome: "rescued" as const,
  inferredType: "string" as const,
  types: { string: 1 },
  count: 1,
  firstSeenMs: 0,
  lastSeenMs: 0,
  samples: [],
  ...over,
});

describe("proposeFromDrift", () => {
  it("declares a rescued field optional with its inferred type and widens an int that arrives as a fraction to decimal", () => {
    const { proposed, needsEdit } = proposeFromDrift(base, [
      field({ field: "channel" }),
      field({ field: "seq", outcome: "quarantined", declaredType: "int", inferredType: "double" }),
    ]);
    expect(needsEdit).toBeNull();
    expect(proposed.contract.fields.channel).toEqual({ type: "string", optional: true });
    expect(proposed.contract.fields.seq).toEqual({ type: "decimal", optional: false });
    expect(proposed.contract.fields.event_id).toEqual(base.contract.fields.event_id);
  });

  it("leaves a mismatch without a safe widening for a person to edit, and says why", () => {
    const { proposed, needsEdit } = proposeFromDrift(base, [
      field({ field: "amount", outcome: "quarantined", declaredType: "decimal", inferredType: "string" }),
    ]);
    expect(proposed.contract.fields.amount).toEqual(base.contract.fields.amount);
    expect(needsEdit).toMatch(/^amount is declared decimal but arrives as string: no type holds both/);
  });

  it("refuses a field name the contract cannot declare instead of proposing an invalid spec", () => {
    const { proposed, needsEdit } = proposeFromDrift(base, [field({ field: "Bad Name!" })]);
    expect(proposed).toEqual(base);
    expect(needsEdit).toMatch(/^the fields cannot be declared as they arrive/);
  });

  it("only widens where every stored and new value fits", () => {
    expect([
      safeWidening("int", "double"),
      safeWidening("int", "decimal"),
      safeWidening("double", "decimal"),
      safeWidening("string", "int"),
      safeWidening("timestamp", "string"),
      safeWidening(undefined, "int"),
    ]).toEqual(["decimal", "decimal", "decimal", undefined, undefined, "int"]);
  });
});

describe("groupForApproval", () => {
  it("keeps the fields that can be declared together, apart from those that cannot, so corrupt values never block a new field", () => {
    const channel = field({ field: "channel" });
    const seq = field({ field: "seq", outcome: "quarantined", declaredType: "int", inferredType: "double" });
    const amount = field({
      field: "amount",
      outcome: "quarantined",
      declaredType: "decimal",
      inferredType: "string",
    });
    const type = field({
      field: "type",
      outcome: "quarantined",
      declaredType: "string",
      inferredType: "json",
    });
    expect(groupForApproval(base, [amount, channel, type, seq]).map((g) => g.map((f) => f.field))).toEqual([
      ["channel", "seq"],
      ["amount", "type"],
    ]);
    expect(groupForApproval(base, [amount]).map((g) => g.map((f) => f.field))).toEqual([["amount"]]);
    expect(groupForApproval(base, [])).toEqual([]);
  });
});
