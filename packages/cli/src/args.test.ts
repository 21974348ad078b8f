import { describe, expect, it } from "vitest";
import { parseArgs } from "./args";

describe("parseArgs", () => {
  it("separates positionals and flags, as the lifecycle commands use them", () => {
    const a = parseArgs(["run", "spec.yaml", "--once"]);
    expect(a).toMatchObject({ command: "run", positionals: ["spec.yaml"], errors: [] });
    expect([...a.flags]).toEqual(["once"]);
  });

  it("an option with a value takes the next argument or the text after '=', so a key never becomes part of the reason", () => {
    const spaced = parseArgs([
      "webhooks",
      "retry",
      "fraud-alerts",
      "--key",
      "fraud-alerts:evt%3A1",
      "receiver",
      "fixed",
    ]);
    expect(spaced.positionals).toEqual(["retry", "fraud-alerts", "receiver", "fixed"]);
    expect(spaced.values.get("key")).toBe("fraud-alerts:evt%3A1");
    expect(parseArgs(["webhooks", "retry", "p", "--key=a=b"]).values.get("key")).toBe("a=b");
  });

  it("an option without its value is an error, not a silent retry of everything", () => {
    expect(parseArgs(["webhooks", "retry", "p", "--key"]).errors).toEqual([
      "--key needs a value, e.g. --key <value>",
    ]);
    expect(parseArgs(["webhooks", "retry", "p", "--key="]).errors).toHaveLength(1);
  });
});
