// The browser tests on @playwright/test, driving Debian's Chromium (Playwright's own browser download is
// not reachable from CI machines). scripts/e2e.sh starts the stack they run against and sets SLUICE_URL;
// the files run one at a time, in name order, because they share that stack (one ledger, one topic).
// A failed test keeps its trace and screenshot under .data/test-results/e2e/ (open a trace with
// `npx playwright show-trace <trace.zip>`); in CI a failed test is retried once and, if it then passes,
// reported as flaky — by the list reporter here and in the closing summary of `npm test`.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "@playwright/test";
import { CHROMIUM_ARGS, chromiumPath } from "./src/browser";
import { baseUrl } from "./src/console-url";

const results = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../.data/test-results");

export default defineConfig({
  testDir: "src",
  testMatch: "*.e2e.ts",
  globalSetup: "./src/global-setup.ts",
  workers: 1,
  fullyParallel: false,
  retries: process.env.CI ? 1 : 0,
  forbidOnly: Boolean(process.env.CI),
  // Whole-stack tests wait for workers to commit batches and alerts to fire; each test sets its own
  // deadlines for those, this is only the outer bound (generous: a loaded 2-core machine is slow).
  timeout: 15 * 60_000,
  // Waits for the page are generous too: they end as soon as the page is there, and a loaded 2-core
  // machine (CI beside other work) can take tens of seconds to answer.
  expect: { timeout: 45_000 },
  outputDir: path.join(results, "e2e"),
  reporter: [
    ["list"],
    ["json", { outputFile: path.join(results, "e2e.json") }],
    ["html", { outputFolder: path.join(results, "e2e-report"), open: "never" }],
  ],
  use: {
    baseURL: baseUrl,
    viewport: { width: 1280, height: 800 },
    timezoneId: "UTC",
    actionTimeout: 45_000,
    navigationTimeout: 60_000,
    launchOptions: { executablePath: chromiumPath(), args: CHROMIUM_ARGS },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
});
