// `sluice reset --to …`: the four kinds of target, and a message naming what to write for anything else.
import { describe, expect, it } from "vitest";
import { parseResetTarget } from "./reset";

describe("parseResetTarget", () => {
  it("reads earliest, latest, an ISO time and partition:offset pairs", () => {
    expect(parseResetTarget("earliest")).toEqual({ kind: "earliest" });
    expect(parseResetTarget("latest")).toEqual({ kind: "latest" });
    expect(parseResetTarget("2026-12-01T10:00:00Z")).toEqual({
      kind: "timestamp",
      at: new Date("2026-12-01T10:00:00Z"),
    });
    expect(parseResetTarget("0:120,1:80")).toEqual({ kind: "offsets", offsets: { "0": 120, "1": 80 } });
  });

  it("says what to write when the target is missing or not one", () => {
    const hint =
      "write --to earliest, --to latest, --to 2026-12-01T10:00:00Z or --to 0:120,1:80 (partition:offset)";
    expect(parseResetTarget(undefined)).toEqual({ error: `where to? ${hint}` });
    expect(parseResetTarget("yesterday")).toEqual({ error: `--to yesterday: not a reset target; ${hint}` });
    expect(parseResetTarget("0:-1")).toEqual({ error: `--to 0:-1: not a reset target; ${hint}` });
  });
});
