import { describe, expect, it } from "vitest";
import { resolveTargets } from "./targets";
import { validateSpec } from "./validate-spec";
import { ledgerSpec } from "./test-specs";
import { stateCompatibility } from "./state-compatibility";

describe("service targets", () => {
  it("a spec without targets gets the defaults: fresh within 5 minutes, at most 1% violations", () => {
    expect(resolveTargets(undefined)).toEqual({ freshness: "5m", freshnessMs: 300_000, violationRate: 0.01 });
  });

  it("a spec's targets are validated and normalized", () => {
    const ok = validateSpec({ ...ledgerSpec(), targets: { freshness: "90s", violationRate: 0.05 } });
    expect(ok.ok && resolveTargets(ok.spec.targets)).toEqual({
      freshness: "90s",
      freshnessMs: 90_000,
      violationRate: 0.05,
    });
  });

  it("a violation rate above 1 or an unknown target names the field and the fix", () => {
    const bad = validateSpec({ ...ledgerSpec(), targets: { violationRate: 5, latency: "1s" } });
    expect(bad.ok).toBe(false);
    const messages = bad.ok ? [] : bad.errors.map((e) => `${e.path}: ${e.message}`);
    expect(messages.join("\n")).toMatch(/targets.*(latency|Unrecognized)/);
    const rate = validateSpec({ ...ledgerSpec(), targets: { violationRate: 5 } });
    expect(rate.ok ? [] : rate.errors.map((e) => `${e.path}: ${e.message}`)).toEqual([
      "targets.violationRate: violationRate is a share between 0 and 1 (0.01 is 1%)",
    ]);
  });
});

describe("targets and state", () => {
  it("a new version that only changes its targets continues every kind of state", () => {
    const before = validateSpec(ledgerSpec());
    const after = validateSpec({ ...ledgerSpec(), targets: { freshness: "1m", violationRate: 0.2 } });
    if (!before.ok || !after.ok) throw new Error("test specs must be valid");
    expect(stateCompatibility(before.spec, after.spec)).toMatchObject({ compatible: true, problems: [] });
  });
});
