import { describe, expect, it } from "vitest";
import { SpecValidationError, formatSpecErrors } from "./errors";
import { parseSpec, parseSpecOrThrow } from "./parse-spec";

const LEDGER = `name: ledger
owner: payments-data
source: { kafka: { topic: payments } }
contract:
  fields:
    event_id: string
    amount: decimal
sink:
  postgres:
    table: ledger
    key: [event_id]
`;

describe("parseSpec", () => {
  it("parses YAML and fills defaults", () => {
    const result = parseSpec(LEDGER);
    expect(result.ok && result.spec.sink).toEqual({
      postgres: { table: "ledger", mode: "append", key: ["event_id"] },
    });
  });

  it("parses the same spec written as JSON, in either mode", () => {
    const json = JSON.stringify({
      name: "ledger",
      owner: "payments-data",
      source: { kafka: { topic: "payments" } },
      contract: { fields: { event_id: "string", amount: "decimal" } },
      sink: { postgres: { table: "ledger", key: ["event_id"] } },
    });
    const asJson = parseSpec(json, { format: "json" });
    const asYaml = parseSpec(json);
    expect(asJson.ok && asYaml.ok && asJson.spec).toEqual(asYaml.ok && asYaml.spec);
    expect(asJson).toEqual(parseSpec(LEDGER));
  });

  it("reports YAML syntax errors with line and column", () => {
    const result = parseSpec("name: ledger\nowner: [payments\nsource: x\n");
    expect(result.ok).toBe(false);
    const [first] = result.ok ? [] : result.errors;
    expect(first).toMatchObject({
      path: "",
      message: expect.stringMatching(/^YAML syntax error/),
      line: expect.any(Number),
      column: expect.any(Number),
    });
  });

  it("reports a duplicated key as a YAML error at its line", () => {
    const result = parseSpec("name: ledger\nname: other\n");
    expect(!result.ok && result.errors[0]).toMatchObject({
      line: 2,
      message: expect.stringMatching(/unique/i),
    });
  });

  it("reports JSON syntax errors with line and column", () => {
    const result = parseSpec('{\n  "name": "ledger",\n  "owner": }\n', { format: "json" });
    expect(!result.ok && result.errors[0]).toMatchObject({
      path: "",
      message: expect.stringMatching(/^JSON syntax error/),
      line: 3,
    });
  });

  it("locates each validation error at its line and column in the text", () => {
    const text = LEDGER.replace("table: ledger", "table: ledger; drop table users").replace(
      "amount: decimal",
      "amount: money",
    );
    const result = parseSpec(text);
    expect(!result.ok && result.errors).toEqual([
      {
        path: "contract.fields.amount",
        message: expect.stringMatching(/"money" is not a field type/),
        line: 7,
        column: 13,
      },
      {
        path: "sink.postgres.table",
        message: expect.stringMatching(/not a valid table name/),
        line: 10,
        column: 12,
      },
    ]);
  });

  it("locates a missing field at its parent and an unknown one at itself, in text order", () => {
    const text = LEDGER.replace("    table: ledger\n", "    tabel: ledger\n");
    const result = parseSpec(text);
    expect(!result.ok && result.errors).toEqual([
      { path: "sink.postgres.table", message: "required field is missing", line: 10, column: 5 },
      {
        path: "sink.postgres.tabel",
        message: 'unknown field "tabel": did you mean "table"?',
        line: 10,
        column: 12,
      },
    ]);
  });

  it("rejects an empty document and a document that is not a mapping", () => {
    expect(parseSpec("")).toEqual({ ok: false, errors: [{ path: "", message: "the spec is empty" }] });
    expect(parseSpec("- a\n- b\n")).toMatchObject({
      ok: false,
      errors: [{ path: "", message: expect.stringMatching(/must be a mapping/) }],
    });
  });

  it("throws every error at once from parseSpecOrThrow, formatted one per line", () => {
    const text = LEDGER.replace("table: ledger", "table: 'x y'").replace(
      "owner: payments-data",
      "owner: Payments",
    );
    expect(() => parseSpecOrThrow(text)).toThrow(SpecValidationError);
    try {
      parseSpecOrThrow(text);
    } catch (error) {
      const { errors } = error as SpecValidationError;
      expect(formatSpecErrors(errors, "ledger.yaml").split("\n")).toEqual([
        expect.stringMatching(/^ledger\.yaml:2:8 owner: "Payments" is not a valid name/),
        expect.stringMatching(/^ledger\.yaml:10:12 sink\.postgres\.table: "x y" is not a valid table name/),
      ]);
    }
  });
});
