// Prints one closing line, "tests: N passed, N failed", summed over the vitest JSON reports and the
// browser tests' output in .data/test-results/, so a reader (or CI) sees at a glance what ran.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const dir = process.argv[2] ?? ".data/test-results";
let passed = 0;
let failed = 0;
for (const file of existsSync(dir) ? readdirSync(dir) : []) {
  const text = readFileSync(path.join(dir, file), "utf8");
  if (file.endsWith(".json")) {
    const report = JSON.parse(text);
    passed += report.numPassedTests ?? 0;
    failed += report.numFailedTests ?? 0;
    // A file whose set-up failed has no failed test but failed all the same: count it once.
    for (const suite of report.testResults ?? []) {
      const failedTests = (suite.assertionResults ?? []).filter((t) => t.status === "failed").length;
      if (suite.status === "failed" && failedTests === 0) failed += 1;
    }
  } else if (file.endsWith(".log")) {
    // node --test's spec reporter ends with "ℹ pass N" / "ℹ fail N".
    passed += Number(/^ℹ pass (\d+)/m.exec(text)?.[1] ?? 0);
    failed += Number(/^ℹ fail (\d+)/m.exec(text)?.[1] ?? 0);
  }
}
console.log(`tests: ${passed} passed, ${failed} failed`);
