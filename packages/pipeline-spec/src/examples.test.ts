// The shipped examples: the good ones validate, each bad one fails with exactly the error it demonstrates.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileSpec } from "./compile-spec";
import { parseSpec } from "./parse-spec";

const dir = join(import.meta.dirname, "..", "examples");
const read = (file: string) => readFileSync(join(dir, file), "utf8");
const good = readdirSync(dir).filter((f) => f.endsWith(".yaml") && !f.startsWith("bad-"));

describe("example specs", () => {
  it.each(good)("%s is valid and compiles", (file) => {
    const result = parseSpec(read(file));
    if (!result.ok) throw new Error(JSON.stringify(result.errors, null, 2));
    expect(() => compileSpec(result.spec)).not.toThrow();
  });

  it("ships the ledger and the settlements pipelines", () => {
    expect(good).toEqual(expect.arrayContaining(["payments-ledger.yaml", "merchant-settlements.yaml"]));
  });

  it("bad-sql-in-table-name.yaml is rejected at sink.postgres.table", () => {
    expect(parseSpec(read("bad-sql-in-table-name.yaml"))).toEqual({
      ok: false,
      errors: [
        {
          path: "sink.postgres.table",
          message: expect.stringMatching(
            /^"payments; DROP TABLE users; --" is not a valid table name \(quotes, spaces, semicolons and comments are never allowed\)/,
          ),
          line: 7,
          column: 28,
        },
      ],
    });
  });

  it("bad-unknown-field-in-expression.yaml is rejected at expectations[1].expr", () => {
    expect(parseSpec(read("bad-unknown-field-in-expression.yaml"))).toEqual({
      ok: false,
      errors: [
        {
          path: "expectations[1].expr",
          message: expect.stringMatching(
            /^unknown field "merchant_id" at column 1 in "merchant_id != ''": expressions can use the contract's fields \(amount, currency, event_id, event_time\)/,
          ),
          line: 9,
          column: 35,
        },
      ],
    });
  });

  it("bad-type-error-in-expectation.yaml is rejected at expectations[1].expr", () => {
    expect(parseSpec(read("bad-type-error-in-expectation.yaml"))).toEqual({
      ok: false,
      errors: [
        {
          path: "expectations[1].expr",
          message: expect.stringMatching(
            /^type error: no such overload: double > string at column 1 in "amount > 'zero'"/,
          ),
          line: 9,
          column: 36,
        },
      ],
    });
  });
});
