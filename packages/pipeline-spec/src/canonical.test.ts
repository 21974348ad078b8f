import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJson, canonicalizeSpec, specHash } from "./canonical";
import { sha256Hex } from "./sha256";
import { ledgerSpec } from "./test-specs";
import { validateSpec } from "./validate-spec";
import type { TPipelineSpec } from "./spec-schema";

function valid(spec: unknown): TPipelineSpec {
  const result = validateSpec(spec);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.spec;
}

describe("canonical form and hash", () => {
  it("sorts keys at every level and keeps list order", () => {
    const json = canonicalJson(valid(ledgerSpec()));
    expect(json.startsWith('{"contract":{"fields":{"amount":')).toBe(true);
    expect(JSON.parse(json).dedupe).toEqual({ key: ["event_id"], within: "watermark" });
  });

  it("gives specs that mean the same thing the same hash", () => {
    const a = ledgerSpec();
    const b = ledgerSpec();
    b.eventTime.watermarkDelay = "600s";
    b.contract.fields = Object.fromEntries(Object.entries(b.contract.fields).reverse());
    b.contract.onUnknownField = "rescue";
    b.trigger = { every: "2000ms" };
    b.sink.postgres = { key: ["event_id"], mode: "append", table: "payments_ledger" };
    b.contract.fields.amount = { type: "decimal" };
    expect(specHash(valid(a))).toBe(specHash(valid(b)));
  });

  it("changes the hash when the meaning changes", () => {
    const b = ledgerSpec();
    b.expectations[0].action = "warn";
    expect(specHash(valid(ledgerSpec()))).not.toBe(specHash(valid(b)));
  });

  it("is a fixed point: the canonical form validates to itself", () => {
    const canonical = canonicalizeSpec(valid(ledgerSpec()));
    expect(canonicalizeSpec(valid(JSON.parse(JSON.stringify(canonical))))).toEqual(canonical);
  });

  it("hashes as sha256 hex of the canonical JSON", () => {
    const spec = valid(ledgerSpec());
    expect(specHash(spec)).toBe(createHash("sha256").update(canonicalJson(spec)).digest("hex"));
  });

  it("implements sha256 exactly (multi-block and non-ASCII input)", () => {
    for (const text of ["", "abc", "x".repeat(55), "x".repeat(56), "x".repeat(1000), "événement ✓ 🚀"]) {
      expect(sha256Hex(text)).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
    }
  });
});
