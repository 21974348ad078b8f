import { describe, expect, it } from "vitest";
import { diffSpecs } from "./diff";
import { ledgerSpec } from "./test-specs";
import { validateSpec } from "./validate-spec";
import type { TPipelineSpec } from "./spec-schema";

function valid(spec: unknown): TPipelineSpec {
  const result = validateSpec(spec);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.spec;
}

describe("diffSpecs", () => {
  it("finds no change between equivalent spellings", () => {
    const b = ledgerSpec();
    b.eventTime.watermarkDelay = "600s";
    expect(diffSpecs(valid(ledgerSpec()), valid(b))).toEqual([]);
  });

  it("lists added, removed and changed fields by path", () => {
    const b = ledgerSpec();
    b.contract.fields.campaign = "string?";
    delete b.contract.fields.card_country;
    b.source.kafka.maxOffsetsPerTrigger = 50_000;
    b.eventTime.watermarkDelay = "15m";
    expect(diffSpecs(valid(ledgerSpec()), valid(b))).toEqual([
      { path: "contract.fields.campaign", kind: "added", after: { type: "string", optional: true } },
      { path: "contract.fields.card_country", kind: "removed", before: { type: "string", optional: true } },
      { path: "eventTime.watermarkDelay", kind: "changed", before: "10m", after: "15m" },
      { path: "source.kafka.maxOffsetsPerTrigger", kind: "changed", before: 10_000, after: 50_000 },
    ]);
  });

  it("matches expectations by name, so inserting one changes nothing else", () => {
    const b = ledgerSpec();
    b.expectations.unshift({ name: "known_currency", expr: "currency in ['USD']", action: "warn" });
    b.expectations[1].action = "fail";
    expect(diffSpecs(valid(ledgerSpec()), valid(b))).toEqual([
      { path: "expectations[positive_amount].action", kind: "changed", before: "drop", after: "fail" },
      {
        path: "expectations[known_currency]",
        kind: "added",
        after: { name: "known_currency", expr: "currency in ['USD']", action: "warn" },
      },
    ]);
  });

  it("reports a reordering of expectations", () => {
    const a = ledgerSpec();
    a.expectations.push({ name: "known_currency", expr: "currency != ''", action: "warn" });
    const b = ledgerSpec();
    b.expectations.unshift({ name: "known_currency", expr: "currency != ''", action: "warn" });
    expect(diffSpecs(valid(a), valid(b))).toEqual([
      {
        path: "expectations",
        kind: "changed",
        before: ["positive_amount", "known_currency"],
        after: ["known_currency", "positive_amount"],
      },
    ]);
  });

  it("compares key lists as whole values, since column order is meaningful", () => {
    const b = ledgerSpec();
    b.dedupe.key = ["event_id", "merchant_id"];
    expect(diffSpecs(valid(ledgerSpec()), valid(b))).toEqual([
      { path: "dedupe.key", kind: "changed", before: ["event_id"], after: ["event_id", "merchant_id"] },
      {
        path: "sink.postgres.key",
        kind: "changed",
        before: ["event_id"],
        after: ["event_id", "merchant_id"],
      },
    ]);
  });
});
