import { describe, expect, it } from "vitest";
import { ledgerSpec } from "./test-specs";
import { validateSpec, ZValidPipelineSpec } from "./validate-spec";
import { ZPipelineSpec } from "./spec-schema";
import type { TSpecError } from "./errors";

function errorsOf(spec: unknown): TSpecError[] {
  const result = validateSpec(spec);
  if (result.ok) throw new Error("expected the spec to be invalid");
  return result.errors;
}

describe("validateSpec: structure and defaults", () => {
  it("fills in every default on a minimal ledger", () => {
    const result = validateSpec({
      name: "ledger",
      owner: "payments-data",
      source: { kafka: { topic: "payments" } },
      contract: { fields: { event_id: "string", amount: "decimal?" } },
      sink: { postgres: { table: "ledger" } },
    });
    expect(result.ok && result.spec).toEqual({
      name: "ledger",
      owner: "payments-data",
      source: { kafka: { topic: "payments", startingOffsets: "earliest", maxOffsetsPerTrigger: 10_000 } },
      format: "json",
      contract: {
        fields: {
          event_id: { type: "string", optional: false },
          amount: { type: "decimal", optional: true },
        },
        onUnknownField: "rescue",
        onTypeMismatch: "quarantine",
      },
      expectations: [],
      lateData: "deadLetter",
      sink: { postgres: { table: "ledger", mode: "append" } },
      trigger: { every: "2s" },
    });
  });

  it("accepts the object form of a field and normalizes durations", () => {
    const spec = ledgerSpec();
    spec.contract.fields.campaign = { type: "string", optional: true };
    spec.eventTime.watermarkDelay = "600s";
    spec.trigger = { every: "1000ms" };
    const result = validateSpec(spec);
    expect(result.ok && result.spec.contract.fields.campaign).toEqual({ type: "string", optional: true });
    expect(result.ok && result.spec.eventTime?.watermarkDelay).toBe("10m");
    expect(result.ok && result.spec.trigger).toEqual({ every: "1s" });
  });

  it("reports every error at once, each with its dotted path", () => {
    const spec = ledgerSpec();
    spec.name = "Payments Ledger";
    spec.source.kafka.maxOffsetsPerTrigger = 0;
    spec.contract.fields.amount = "money";
    spec.expectations.push({ name: "x", expr: "amount >", action: "explode" });
    spec.sink.postgres.table = "payments; drop table users";
    const paths = errorsOf(spec).map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "name",
        "source.kafka.maxOffsetsPerTrigger",
        "contract.fields.amount",
        "expectations[1].action",
        "sink.postgres.table",
      ]),
    );
  });

  it("names the value and the fix for an unknown field type", () => {
    const spec = ledgerSpec();
    spec.contract.fields.amount = "money";
    expect(errorsOf(spec)).toContainEqual({
      path: "contract.fields.amount",
      message: expect.stringMatching(
        /"money" is not a field type: use one of string, int, decimal.*string\?/,
      ),
    });
  });

  it("suggests the intended key for a misspelled field", () => {
    const spec = ledgerSpec();
    spec.sink.postgres = { tabel: "payments_ledger" };
    spec.evenTime = spec.eventTime;
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({
      path: "sink.postgres.tabel",
      message: 'unknown field "tabel": did you mean "table"?',
    });
    expect(errors).toContainEqual({ path: "sink.postgres.table", message: "required field is missing" });
    expect(errors).toContainEqual({
      path: "evenTime",
      message: 'unknown field "evenTime": did you mean "eventTime"?',
    });
  });

  it("rejects enum values with the allowed ones", () => {
    const spec = ledgerSpec();
    spec.contract.onUnknownField = "ignore";
    expect(errorsOf(spec)).toContainEqual({
      path: "contract.onUnknownField",
      message: '"ignore" is not allowed here: use "rescue" or "quarantine" or "reject"',
    });
  });

  it("rejects contract field names that are not identifiers, start with _ or are reserved", () => {
    const spec = ledgerSpec();
    spec.contract.fields = {
      "event id": "string",
      _rescued: "json",
      order: "int",
      if: "string",
      ok: "string",
    };
    const errors = errorsOf(spec);
    expect(errors.map((e) => e.path)).toEqual(
      expect.arrayContaining([
        'contract.fields["event id"]',
        "contract.fields._rescued",
        "contract.fields.order",
        "contract.fields.if",
      ]),
    );
    expect(errors.find((e) => e.path === "contract.fields._rescued")?.message).toMatch(
      /reserved for Sluice's own columns/,
    );
    expect(errors.find((e) => e.path === "contract.fields.if")?.message).toMatch(
      /reserved word in expressions/,
    );
  });

  it("rejects an empty contract and a non-object spec", () => {
    const spec = ledgerSpec();
    spec.contract.fields = {};
    spec.eventTime = undefined;
    spec.dedupe = undefined;
    spec.expectations = [];
    expect(errorsOf(spec)).toContainEqual({
      path: "contract.fields",
      message: expect.stringMatching(/at least one field/),
    });
    expect(errorsOf("name: x")).toEqual([{ path: "", message: expect.stringMatching(/must be a mapping/) }]);
  });

  it("requires exactly one sink and exactly one trigger kind", () => {
    const spec = ledgerSpec();
    spec.sink = { postgres: { table: "a" }, webhook: { url: "https://x.example.com" } };
    spec.trigger = {};
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({
      path: "sink",
      message: expect.stringMatching(/exactly one of postgres, webhook \(got postgres and webhook\)/),
    });
    expect(errors).toContainEqual({
      path: "trigger",
      message: expect.stringMatching(/exactly one of every, availableNow \(got none\)/),
    });
  });

  it("accepts trigger availableNow and rejects availableNow: false", () => {
    const spec = ledgerSpec();
    spec.trigger = { availableNow: true };
    expect(validateSpec(spec).ok).toBe(true);
    spec.trigger = { availableNow: false };
    expect(errorsOf(spec).map((e) => e.path)).toContain("trigger.availableNow");
  });

  it("rejects a zero trigger interval and a bare number as a duration", () => {
    const spec = ledgerSpec();
    spec.trigger = { every: 0 };
    spec.eventTime.watermarkDelay = 600;
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({ path: "trigger.every", message: expect.stringMatching(/longer than 0/) });
    expect(errors).toContainEqual({
      path: "eventTime.watermarkDelay",
      message: expect.stringMatching(/600 has no unit/),
    });
  });

  it("validates Kafka source settings", () => {
    const spec = ledgerSpec();
    spec.source.kafka = {
      topic: "pay ments",
      startingOffsets: "beginning",
      maxOffsetsPerTrigger: 2.5,
      partitions: [0, 0],
    };
    expect(errorsOf(spec).map((e) => e.path)).toEqual(
      expect.arrayContaining([
        "source.kafka.topic",
        "source.kafka.startingOffsets",
        "source.kafka.maxOffsetsPerTrigger",
        "source.kafka.partitions",
      ]),
    );
  });

  it("only accepts json as the format", () => {
    const spec = ledgerSpec();
    spec.format = "avro";
    expect(errorsOf(spec)).toContainEqual({ path: "format", message: expect.stringMatching(/json/) });
  });

  it("ZPipelineSpec (structure only) fills the same defaults as validateSpec", () => {
    const result = validateSpec(ledgerSpec());
    expect(ZPipelineSpec.parse(ledgerSpec())).toEqual(result.ok && result.spec);
  });

  it("works as a zod schema for tRPC inputs, with the same paths", () => {
    const spec = ledgerSpec();
    expect(ZValidPipelineSpec.parse(spec).sink).toEqual({
      postgres: { table: "payments_ledger", mode: "append", key: ["event_id"] },
    });
    spec.sink.postgres.table = "drop table x";
    const result = ZValidPipelineSpec.safeParse(spec);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(["sink", "postgres", "table"]);
  });
});

describe("validateSpec: rows, event time, dedupe, expectations", () => {
  it("requires eventTime.column to be a required timestamp field of the contract", () => {
    const spec = ledgerSpec();
    spec.eventTime.column = "event_ts";
    expect(errorsOf(spec)).toContainEqual({
      path: "eventTime.column",
      message: expect.stringMatching(/"event_ts" is not a contract field.*use one of amount, card_country/),
    });
    spec.eventTime.column = "amount";
    expect(errorsOf(spec)).toContainEqual({
      path: "eventTime.column",
      message: expect.stringMatching(/amount is a decimal field; event time must be a timestamp/),
    });
    spec.contract.fields.event_time = "timestamp?";
    spec.eventTime.column = "event_time";
    expect(errorsOf(spec)).toContainEqual({
      path: "eventTime.column",
      message: expect.stringMatching(/optional.*declare it required/),
    });
  });

  it("requires dedupe keys to be required contract fields", () => {
    const spec = ledgerSpec();
    spec.dedupe.key = ["event_id", "eventid", "card_country"];
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({
      path: "dedupe.key[1]",
      message: expect.stringMatching(/"eventid" is not a contract field/),
    });
    expect(errors).toContainEqual({
      path: "dedupe.key[2]",
      message: expect.stringMatching(/card_country is optional/),
    });
  });

  it("rejects dedupe within the watermark when there is no event time", () => {
    const spec = ledgerSpec();
    delete spec.eventTime;
    expect(errorsOf(spec)).toEqual([
      { path: "dedupe.within", message: expect.stringMatching(/needs a watermark: add eventTime/) },
    ]);
    spec.dedupe.within = "24h";
    expect(validateSpec(spec).ok).toBe(true);
  });

  it("rejects a dedupe key listed twice and a malformed within", () => {
    const spec = ledgerSpec();
    spec.dedupe = { key: ["event_id", "event_id"], within: "forever" };
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({ path: "dedupe.key[1]", message: expect.stringMatching(/listed twice/) });
    expect(errors).toContainEqual({
      path: "dedupe.within",
      message: expect.stringMatching(/watermark or a duration/),
    });
  });

  it("requires unique, identifier-like expectation names", () => {
    const spec = ledgerSpec();
    spec.expectations.push({ name: "positive_amount", expr: "amount < 1000000.0" });
    spec.expectations.push({ name: "Known Currency", expr: "currency != ''" });
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({
      path: "expectations[1].name",
      message: expect.stringMatching(/already declared at expectations\[0\]/),
    });
    expect(errors).toContainEqual({
      path: "expectations[2].name",
      message: expect.stringMatching(/not a valid expectation name/),
    });
  });

  it("defaults an expectation's action to warn", () => {
    const spec = ledgerSpec();
    spec.expectations = [{ name: "positive_amount", expr: "amount > 0" }];
    const result = validateSpec(spec);
    expect(result.ok && result.spec.expectations[0]?.action).toBe("warn");
  });

  it("requires selected columns to be contract fields", () => {
    const spec = ledgerSpec();
    spec.transform = { select: ["event_id", "amount_usd"] };
    expect(errorsOf(spec)).toContainEqual({
      path: "transform.select[1]",
      message: expect.stringMatching(/"amount_usd" is not a contract field/),
    });
  });
});
