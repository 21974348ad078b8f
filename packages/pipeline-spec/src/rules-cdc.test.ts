import { describe, expect, it } from "vitest";
import { cdcSpec } from "./test-specs";
import { validateSpec } from "./validate-spec";
import { outputColumns } from "./output-columns";
import type { TSpecError } from "./errors";

function errorsOf(spec: unknown): TSpecError[] {
  const result = validateSpec(spec);
  if (result.ok) throw new Error("expected the spec to be invalid");
  return result.errors;
}

describe("cdc rules", () => {
  it("normalizes the deleteWhen shorthand and keys an SCD2 table by key + valid_from", () => {
    const result = validateSpec(cdcSpec());
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(result.spec.cdc).toEqual({
      key: ["customer_id"],
      sequenceBy: "version",
      operation: { deleteWhen: "op == 'D'" },
      scdType: 2,
    });
    expect(result.spec.sink).toEqual({
      postgres: { table: "customer_status", mode: "upsert", key: ["customer_id", "valid_from"] },
    });
    expect(outputColumns(result.spec).map((c) => `${c.name}:${c.type}${c.optional ? "?" : ""}`)).toEqual([
      "customer_id:string",
      "op:string",
      "status:string",
      "version:int",
      "valid_from:int",
      "valid_to:int?",
      "is_current:boolean",
    ]);
  });

  it("keys an SCD1 table by the entity key and defaults scdType to 1", () => {
    const spec = cdcSpec();
    delete spec.cdc.scdType;
    const result = validateSpec(spec);
    expect(result.ok && result.spec.cdc?.scdType).toBe(1);
    expect(result.ok && result.spec.sink).toEqual({
      postgres: { table: "customer_status", mode: "upsert", key: ["customer_id"] },
    });
  });

  it("accepts operation: { column, deleteWhen } and checks the column", () => {
    const spec = cdcSpec();
    delete spec.cdc.deleteWhen;
    spec.cdc.operation = { column: "operation", deleteWhen: "op == 'D'" };
    expect(errorsOf(spec)).toEqual([
      { path: "cdc.operation.column", message: expect.stringMatching(/"operation" is not a contract field/) },
    ]);
  });

  it("rejects deleteWhen given twice", () => {
    const spec = cdcSpec();
    spec.cdc.operation = { deleteWhen: "op == 'D'" };
    expect(errorsOf(spec)).toContainEqual({
      path: "cdc.deleteWhen",
      message: expect.stringMatching(/set twice/),
    });
  });

  it("type-checks the delete condition where the user wrote it", () => {
    const spec = cdcSpec();
    spec.cdc.deleteWhen = "operation == 'D'";
    expect(errorsOf(spec)).toEqual([
      { path: "cdc.deleteWhen", message: expect.stringMatching(/unknown field "operation"/) },
    ]);
  });

  it("requires key and sequence fields that exist, are required, and order changes", () => {
    const spec = cdcSpec();
    spec.contract.fields.risk_score = "int?";
    spec.cdc.key = ["customer", "risk_score"];
    spec.cdc.sequenceBy = "status";
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({
      path: "cdc.key[0]",
      message: expect.stringMatching(/"customer" is not a contract field/),
    });
    expect(errors).toContainEqual({
      path: "cdc.key[1]",
      message: expect.stringMatching(/risk_score is optional/),
    });
    expect(errors).toContainEqual({
      path: "cdc.sequenceBy",
      message: expect.stringMatching(
        /status is string; the sequence must be an int, decimal, double or timestamp/,
      ),
    });
  });

  it("rejects contract fields that collide with SCD2 history columns", () => {
    const spec = cdcSpec();
    spec.contract.fields.is_current = "boolean";
    expect(errorsOf(spec)).toContainEqual({
      path: "contract.fields.is_current",
      message: expect.stringMatching(/collides with a column SCD2 history adds/),
    });
  });

  it("requires an upsert postgres sink keyed by the cdc key", () => {
    const spec = cdcSpec();
    spec.sink.postgres = { table: "customer_status", mode: "append", key: ["customer_id"] };
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({
      path: "sink.postgres.mode",
      message: expect.stringMatching(/cdc updates and deletes rows in place: use mode: upsert/),
    });
    expect(errors).toContainEqual({
      path: "sink.postgres.key",
      message: expect.stringMatching(/scdType 2 is keyed by \[customer_id, valid_from\]/),
    });
  });

  it("stateEviction: watermark needs eventTime, and is its only value", () => {
    const spec = cdcSpec();
    spec.cdc.stateEviction = "watermark";
    expect(errorsOf(spec)).toContainEqual({
      path: "cdc.stateEviction",
      message: expect.stringMatching(
        /^stateEviction: watermark evicts applied changes once the watermark passes their event time: declare eventTime/,
      ),
    });
    spec.contract.fields.changed_at = "timestamp";
    spec.eventTime = { column: "changed_at", watermarkDelay: "5m" };
    const result = validateSpec(spec);
    expect(result.ok && result.spec.cdc?.stateEviction).toBe("watermark");
    spec.cdc.stateEviction = "forever";
    expect(errorsOf(spec)).toContainEqual({
      path: "cdc.stateEviction",
      message: '"forever" is not allowed here: use "watermark"',
    });
  });

  it("rejects a webhook sink for cdc", () => {
    const spec = cdcSpec();
    spec.sink = { webhook: { url: "https://hooks.example.com/x" } };
    expect(errorsOf(spec)).toContainEqual({
      path: "sink",
      message: expect.stringMatching(/cdc applies changes to a table/),
    });
  });
});
