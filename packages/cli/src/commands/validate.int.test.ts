// Guarantee: a bad spec is rejected at validation, before anything runs, with a message that names the
// offending field's path (issue 3, "Bad specs"). Drives the real `sluice validate` command as a child
// process on the three deliberately bad example specs, and checks exit code 1.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runSluice } from "@sluice/engine/testing";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const EXAMPLES = path.join(REPO_ROOT, "packages/pipeline-spec/examples");

/** `sluice validate <file>` (an example's name, or a path): no database, no user. */
const sluiceValidate = (file: string) =>
  runSluice(["validate", path.isAbsolute(file) ? file : path.join(EXAMPLES, file)], { actor: null });

describe("sluice validate rejects bad specs with the path of the offending field", () => {
  it.concurrent("a table name with SQL in it: exit 1, names sink.postgres.table and the line", async () => {
    const r = await sluiceValidate("bad-sql-in-table-name.yaml");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(
      /bad-sql-in-table-name\.yaml:7:\d+ sink\.postgres\.table: "payments; DROP TABLE users; --" is not a valid table name/,
    );
  });

  it.concurrent(
    "an unknown field in an expression: exit 1, names expectations[1].expr and the field",
    async () => {
      const r = await sluiceValidate("bad-unknown-field-in-expression.yaml");
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/:9:\d+ expectations\[1\]\.expr: unknown field "merchant_id"/);
      // The message says what would work instead.
      expect(r.stderr).toMatch(
        /expressions can use the contract's fields \(amount, currency, event_id, event_time\)/,
      );
    },
  );

  it.concurrent(
    "a type error in an expectation: exit 1, names expectations[1].expr and the mismatched types",
    async () => {
      const r = await sluiceValidate("bad-type-error-in-expectation.yaml");
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /:9:\d+ expectations\[1\]\.expr: type error: no such overload: double > string/,
      );
      // The first expectation is fine: only the bad one is reported.
      expect(r.stderr).not.toMatch(/expectations\[0\]/);
    },
  );

  it.concurrent("a good spec passes: exit 0", async () => {
    const r = await sluiceValidate("payments-ledger.yaml");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/valid pipeline "payments-ledger"/);
  });

  // Hostile files: a parser must not be the thing that fails (#19 item 7: these exited 2, uncaught).
  const hostile = mkdtempSync(path.join(tmpdir(), "sluice-validate-"));
  const write = (name: string, text: string) => {
    const file = path.join(hostile, name);
    writeFileSync(file, text);
    return file;
  };

  it.concurrent("10,000-deep JSON: exit 1 with the line and column where it got too deep", async () => {
    const r = await sluiceValidate(write("deep.json", "[".repeat(10_000) + "]".repeat(10_000)));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/deep\.json:1:65 \(spec\): the text is nested more than 64 levels deep here/);
  });

  it.concurrent("10,000-deep YAML flow collections: exit 1, located", async () => {
    const r = await sluiceValidate(
      write("deep.yaml", `name: x\nowner: ${"{a: ".repeat(10_000)}1${"}".repeat(10_000)}\n`),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/deep\.yaml:2:\d+ \(spec\): the text is nested more than 64 levels deep here/);
  });

  it.concurrent("a YAML alias bomb (billion laughs): exit 1, located at its first alias", async () => {
    const levels = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"];
    for (const [prev, name] of [
      ["a", "b"],
      ["b", "c"],
      ["c", "d"],
      ["d", "e"],
      ["e", "f"],
      ["f", "g"],
    ])
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(", ")}]`);
    const r = await sluiceValidate(write("bomb.yaml", levels.join("\n") + "\n"));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/bomb\.yaml:2:\d+ \(spec\): YAML aliases expand to too much/);
  });
});
