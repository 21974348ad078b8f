// The browser tests' `test`: Playwright's, with the console's people signed in and the console's
// database at hand. Every page comes from a browser context of its own (its own cookies), so a test
// can act as several people at once; contexts are closed after the test, and Playwright records a
// trace of each one (kept when the test fails).
//
//   test("…", async ({ operator, viewer, db }) => { … })           // one page per role
//   test("…", async ({ signIn }) => { const pat = await signIn("pat@sluice.local", { password }) })
//   test.beforeAll(async ({ browser }) => { page = await signedIn(browser, "owner@sluice.local") })
import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { test as base, expect, type Browser, type Locator, type Page } from "@playwright/test";
import pg from "pg";

export { expect };

export const DEMO_PASSWORD = process.env.SLUICE_DEMO_PASSWORD ?? "sluice-demo";
/** The console's database (scripts/e2e.sh sets it), for tests that set up data the UI then acts on. */
export const databaseUrl = process.env.SLUICE_E2E_DATABASE_URL;
/** The repository: where the CLI runs from and the demo specs are read. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** `sluice <args> --as admin@sluice.local` against the console's database; resolves with its output. */
export const sluiceAsAdmin = (...args: string[]) =>
  promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "packages/cli/src/main.ts", ...args, "--as", "admin@sluice.local"],
    { cwd: repoRoot, env: { ...process.env, DATABASE_URL: databaseUrl } },
  );
/** The numbers behind a chart's drawn points (apps/web/src/charts/plotted.ts: its `data-plotted`). */
export interface TPlotted {
  /** Bucket starts, epoch milliseconds. */
  t: number[];
  series: Record<string, (number | null)[]>;
}
/** What the first chart (or sparkline) with this test id inside `within` plots. */
export const plottedIn = async (within: Page | Locator, testId: string): Promise<TPlotted> =>
  JSON.parse((await within.getByTestId(testId).first().getAttribute("data-plotted")) ?? "null") as TPlotted;
/** Screenshots the tests take for people to look at (failures' own are under .data/test-results/e2e/). */
export const screenshotsDir = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../.data/test-results/screenshots",
);

export interface SignInOptions {
  password?: string;
  width?: number;
  height?: number;
  /** Default timeout of the page's actions and waits (else the config's actionTimeout). */
  timeoutMs?: number;
}

/** A page of its own (a fresh browser context) signed in through the sign-in form, landed on the fleet. */
export async function signedIn(browser: Browser, email: string, opts: SignInOptions = {}): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width: opts.width ?? 1400, height: opts.height ?? 1000 },
  });
  if (opts.timeoutMs) context.setDefaultTimeout(opts.timeoutMs);
  const page = await context.newPage();
  await page.goto("/sign-in");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(opts.password ?? DEMO_PASSWORD);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(/\/pipelines$/);
  return page;
}

/** A full-page screenshot into .data/test-results/screenshots/, also attached to the test's report. */
export async function screenshot(page: Page, name: string, opts: { fullPage?: boolean } = {}): Promise<void> {
  mkdirSync(screenshotsDir, { recursive: true });
  const file = path.join(screenshotsDir, name);
  // Full-page shots of the long pipeline page take a while on a loaded 2-core machine.
  await page.screenshot({ path: file, fullPage: opts.fullPage ?? true, timeout: 90_000 });
  await test.info().attach(name, { path: file, contentType: "image/png" });
}

interface Fixtures {
  /** Signs a person in on a page of their own; closed after the test. */
  signIn: (email: string, opts?: SignInOptions) => Promise<Page>;
  operator: Page;
  owner: Page;
  admin: Page;
  viewer: Page;
}

export const test = base.extend<Fixtures, { db: pg.Client }>({
  signIn: async ({ browser }, use) => {
    const pages: Page[] = [];
    await use(async (email, opts) => {
      const page = await signedIn(browser, email, opts);
      pages.push(page);
      return page;
    });
    for (const page of pages) await page.context().close();
  },
  operator: async ({ signIn }, use) => use(await signIn("operator@sluice.local")),
  owner: async ({ signIn }, use) => use(await signIn("owner@sluice.local")),
  admin: async ({ signIn }, use) => use(await signIn("admin@sluice.local")),
  viewer: async ({ signIn }, use) => use(await signIn("viewer@sluice.local")),
  db: [
    async ({}, use) => {
      if (!databaseUrl) throw new Error("SLUICE_E2E_DATABASE_URL is not set (scripts/e2e.sh sets it)");
      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      await use(db);
      await db.end();
    },
    { scope: "worker" },
  ],
});
