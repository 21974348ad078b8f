import { describe, expect, it } from "vitest";
import { maskCredentials, runHealthChecks } from "./run-health-checks";

describe("runHealthChecks", () => {
  it("reports ok when every probe answers", async () => {
    const report = await runHealthChecks({ a: async () => 1, b: async () => "pong" });
    expect(report.status).toBe("ok");
    expect(report.checks.a.ok).toBe(true);
    expect(report.checks.b.error).toBeUndefined();
  });

  it("a hanging probe fails at its own deadline without holding up the others", async () => {
    let aborted = false;
    const started = Date.now();
    const report = await runHealthChecks(
      {
        fast: async () => undefined,
        hangs: (signal) =>
          new Promise(() => {
            signal.addEventListener("abort", () => (aborted = true));
          }),
      },
      { timeoutMs: 100 },
    );
    expect(Date.now() - started).toBeLessThan(1000);
    expect(report.status).toBe("degraded");
    expect(report.checks.fast.ok).toBe(true);
    expect(report.checks.hangs).toMatchObject({ ok: false, error: "no answer within 100 ms" });
    expect(aborted).toBe(true);
  });

  it("a failing probe's error never carries credentials from a URL", async () => {
    const report = await runHealthChecks({
      pg: async () => {
        throw new Error("connect failed for postgresql://sluice:hunter2@db.internal:5432/sluice");
      },
    });
    expect(report.checks.pg.error).toBe("connect failed for postgresql://***@db.internal:5432/sluice");
    expect(JSON.stringify(report)).not.toContain("hunter2");
  });
});

describe("maskCredentials", () => {
  it("leaves URLs without credentials alone", () => {
    expect(maskCredentials("redis://127.0.0.1:6379")).toBe("redis://127.0.0.1:6379");
  });
});
