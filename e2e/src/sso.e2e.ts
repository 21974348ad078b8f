// Single sign-on in a real browser against the real OpenID Connect provider that scripts/e2e.sh starts
// (packages/testing/src/oidc/: "otto" is in risk-oncall, mapped by the demo seed to operator of Risk &
// Fraud; "mallory" is only in contractors, mapped to nothing). Otto lands in his mapped team with the
// mapped role; Mallory gets the "no access" page and no account.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { Browser, Page } from "playwright-core";
import { launchBrowser } from "./browser";
import { assertConsoleReachable, baseUrl } from "./console-url";

const resultsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../test-results");
const databaseUrl = process.env.SLUICE_E2E_DATABASE_URL;
let browser: Browser;

async function signInThroughProvider(user: string): Promise<Page> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(20_000);
  const page = await context.newPage();
  await page.goto("/sign-in");
  await page.getByRole("button", { name: "Sign in with Test IdP" }).click();
  await page.getByRole("heading", { name: "Test identity provider" }).waitFor();
  await page.getByLabel("Username").fill(user);
  await page.getByRole("button", { name: "Sign in" }).click();
  return page;
}

describe(
  "single sign-on",
  { skip: databaseUrl ? false : "needs scripts/e2e.sh (it starts the identity provider)" },
  () => {
    before(async () => {
      await assertConsoleReachable();
      browser = await launchBrowser();
    });
    after(async () => {
      await browser?.close();
    });

    test("the password form stays, and single sign-on is offered because it is configured", async () => {
      const page = await browser.newPage({ baseURL: baseUrl });
      await page.goto("/sign-in");
      await page.getByLabel("Password").waitFor();
      await page.getByRole("button", { name: "Sign in with Test IdP" }).waitFor();
      await page.close();
    });

    test("a first sign-in through the provider lands in the mapped team with the mapped role", async () => {
      const page = await signInThroughProvider("otto");
      await page.waitForURL(/\/pipelines$/);
      const user = page.getByTestId("signed-in-user");
      await user.getByText("Otto On-call").waitFor();
      await user.getByText("operator", { exact: true }).waitFor();
      await page.goto("/account");
      await page.getByTestId("account-teams").filter({ hasText: "Risk & Fraud" }).waitFor();
      await page.getByText("You sign in with single sign-on").waitFor();
      mkdirSync(resultsDir, { recursive: true });
      await page.screenshot({ path: path.join(resultsDir, "sso-signed-in.png"), fullPage: true });

      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      try {
        const { rows } = await db.query(
          `SELECT u.role, t.slug, m.source FROM users u JOIN team_members m ON m.user_id = u.id JOIN teams t ON t.id = m.team_id WHERE u.email = 'otto@idp.example'`,
        );
        assert.deepEqual(rows, [{ role: "operator", slug: "risk", source: "sso" }]);
      } finally {
        await db.end();
      }
      await page.context().close();
    });

    test("a user whose groups map to nothing gets a clear no-access page and no account", async () => {
      const page = await signInThroughProvider("mallory");
      await page.waitForURL(/\/sign-in\/problem\?error=no_access/);
      await page.getByRole("heading", { name: "No access to Sluice" }).waitFor();
      await page.getByText("your groups (contractors) are not mapped").waitFor();
      await page.screenshot({ path: path.join(resultsDir, "sso-no-access.png"), fullPage: true });
      await page.goto("/pipelines");
      await page.waitForURL(/\/sign-in\?next=%2Fpipelines$/);
      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      try {
        assert.equal(
          (await db.query(`SELECT count(*)::int AS n FROM users WHERE email = 'mallory@idp.example'`)).rows[0]
            .n,
          0,
        );
      } finally {
        await db.end();
      }
      await page.context().close();
    });
  },
);
