// Prints one closing line, "tests: N passed, N failed", summed over the JSON reports in
// .data/test-results/ (vitest's unit.json and integration.json, Playwright's e2e.json), so a reader (or
// CI) sees at a glance what ran. Browser tests that failed and then passed on a retry count as passed
// and are listed above that line as flaky, by name: a retry never hides one.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const dir = process.argv[2] ?? ".data/test-results";
let passed = 0;
let failed = 0;
const flaky = [];

/** Playwright's report: suites of specs, each with a test per project holding its status. */
function playwrightFlaky(suites, file = "") {
  for (const suite of suites ?? []) {
    const where = suite.file ?? file;
    for (const spec of suite.specs ?? [])
      for (const t of spec.tests ?? []) if (t.status === "flaky") flaky.push(`${where}: ${spec.title}`);
    playwrightFlaky(suite.suites, where);
  }
}

for (const file of existsSync(dir) ? readdirSync(dir) : []) {
  if (!file.endsWith(".json")) continue;
  const report = JSON.parse(readFileSync(path.join(dir, file), "utf8"));
  if (report.stats && "expected" in report.stats) {
    passed += report.stats.expected + report.stats.flaky;
    failed += report.stats.unexpected;
    // A run that failed before any test (global set-up) still failed: count it once.
    if (report.stats.unexpected === 0 && (report.errors ?? []).length > 0) failed += 1;
    playwrightFlaky(report.suites);
    continue;
  }
  passed += report.numPassedTests ?? 0;
  failed += report.numFailedTests ?? 0;
  // A file whose set-up failed has no failed test but failed all the same: count it once.
  for (const suite of report.testResults ?? []) {
    const failedTests = (suite.assertionResults ?? []).filter((t) => t.status === "failed").length;
    if (suite.status === "failed" && failedTests === 0) failed += 1;
  }
}
for (const name of flaky) console.log(`flaky (failed, then passed on retry): ${name}`);
console.log(`tests: ${passed} passed, ${failed} failed`);
