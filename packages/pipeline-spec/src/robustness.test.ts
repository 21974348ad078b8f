// validateSpec is fed user input from files and the console: malformed input of any shape must come
// back as errors, never as an exception.
import { describe, expect, it } from "vitest";
import { parseSpec } from "./parse-spec";
import { ledgerSpec, settlementsSpec, cdcSpec } from "./test-specs";
import { validateSpec } from "./validate-spec";

const GARBAGE: unknown[] = [null, 0, "x", true, [], [1, 2], {}, { a: { b: [null] } }, Number.NaN];

describe("malformed input", () => {
  it.each(GARBAGE)("returns errors for a spec of %j", (value) => {
    const result = validateSpec(value);
    expect(result.ok).toBe(false);
  });

  it("returns errors when any section has any wrong shape", () => {
    for (const make of [ledgerSpec, settlementsSpec, cdcSpec]) {
      for (const key of Object.keys(make())) {
        for (const value of GARBAGE) {
          const spec = make();
          spec[key] = value;
          expect(() => validateSpec(spec), `${key} = ${JSON.stringify(value)}`).not.toThrow();
        }
      }
    }
  });

  it("reports an invalid header name at the header", () => {
    const spec = ledgerSpec();
    spec.sink = { webhook: { url: "https://hooks.example.com/x", headers: { "X Team": "risk" } } };
    const result = validateSpec(spec);
    expect(!result.ok && result.errors).toContainEqual({
      path: expect.stringMatching(/^sink\.webhook\.headers/),
      message: expect.stringMatching(/not a header name/),
    });
  });

  it("survives YAML with anchors, tags and multiple documents", () => {
    expect(parseSpec("a: &x [1]\nb: *x\n").ok).toBe(false);
    expect(parseSpec("name: !!binary aGk=\n").ok).toBe(false);
    expect(parseSpec("name: a\n---\nname: b\n")).toEqual({
      ok: false,
      errors: [
        { path: "", message: expect.stringMatching(/one document: remove the ---/), line: 2, column: 1 },
      ],
    });
  });
});
