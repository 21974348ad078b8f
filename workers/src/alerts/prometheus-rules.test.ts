// The Prometheus rules file in docs/alerting/ stays valid and true: `promtool check rules` accepts it,
// its recorded-series tests pass (`promtool test rules`), and every sluice_* metric it uses is one the
// workers register (so a renamed metric breaks this test, not someone's paging). promtool comes from
// Debian's `prometheus` package (.ci/run installs it); without it the promtool checks are skipped with
// a message saying so.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createPipelineMetrics } from "../batches/pipeline-metrics";
import { createWorkerMetrics } from "../metrics";

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../docs/alerting");
const PROMTOOL = "/usr/bin/promtool";
const hasPromtool = existsSync(PROMTOOL);
if (!hasPromtool)
  console.warn(
    `[prometheus-rules] ${PROMTOOL} not found: skipping promtool check/test (apt-get install prometheus, as .ci/run does)`,
  );

function promtool(...args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) =>
    execFile(PROMTOOL, args, { cwd: DIR }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr }),
    ),
  );
}

describe("the Prometheus rules file (docs/alerting/sluice-rules.yml)", () => {
  it.skipIf(!hasPromtool)("passes promtool check rules", async () => {
    const r = await promtool("check", "rules", "sluice-rules.yml");
    expect(r.out).toContain("SUCCESS: 10 rules found");
    expect(r.code).toBe(0);
  });

  it.skipIf(!hasPromtool)("passes its recorded-series tests (promtool test rules)", async () => {
    const r = await promtool("test", "rules", "sluice-rules.test.yml");
    expect(r.out).toContain("SUCCESS");
    expect(r.code).toBe(0);
  });

  it("uses only metrics the workers export", async () => {
    const worker = createWorkerMetrics();
    createPipelineMetrics(worker.registry);
    const exported = new Set(
      (await worker.registry.getMetricsAsJSON()).flatMap((m) => [
        m.name,
        `${m.name}_bucket`,
        `${m.name}_sum`,
        `${m.name}_count`,
      ]),
    );
    const used = [
      ...new Set(readFileSync(path.join(DIR, "sluice-rules.yml"), "utf8").match(/\bsluice_[a-z_]+/g) ?? []),
    ];
    expect(used.length).toBeGreaterThan(5);
    expect(used.filter((m) => !exported.has(m))).toEqual([]);
    // And the metrics documented in the README of docs/alerting are the exported ones.
    const documented = readFileSync(path.join(DIR, "README.md"), "utf8");
    expect(used.filter((m) => !documented.includes(`\`${m}\``))).toEqual([]);
  });
});
