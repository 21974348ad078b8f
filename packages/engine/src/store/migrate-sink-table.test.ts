// Which changes a continuing version may make to its sink table: only those that keep every stored row valid.
import { describe, expect, it } from "vitest";
import { ledgerSpec } from "../testing/engine-fixture";
import { sinkTableChanges } from "./migrate-sink-table";

const before = ledgerSpec("t");
const withFields = (fields: Record<string, unknown>) =>
  ledgerSpec("t", { contract: { ...before.contract, fields: { ...before.contract.fields, ...fields } } });

describe("sinkTableChanges", () => {
  it("adds a new field as a nullable column, widens a number column, and drops NOT NULL of a field made optional", () => {
    const plan = sinkTableChanges(
      before,
      withFields({ channel: "string?", seq: "decimal", currency: "string?" }),
    )!;
    expect(plan.refusals).toEqual([]);
    expect(plan.statements).toEqual([
      'ALTER TABLE "ledger" ADD COLUMN IF NOT EXISTS "channel" text',
      'ALTER TABLE "ledger" ALTER COLUMN "currency" DROP NOT NULL',
      'ALTER TABLE "ledger" ALTER COLUMN "seq" TYPE numeric USING "seq"::numeric',
    ]);
  });

  it("refuses a retype that could change stored values, and leaves another table alone", () => {
    expect(sinkTableChanges(before, withFields({ seq: "string" }))!.refusals).toEqual([
      "column seq would change from bigint to text, which could change or lose values already stored: alter ledger yourself, or write a new table",
    ]);
    expect(
      sinkTableChanges(before, ledgerSpec("t", { sink: { postgres: { table: "other" } } })),
    ).toBeUndefined();
  });
});
