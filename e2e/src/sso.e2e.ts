// Single sign-on in a real browser against the real OpenID Connect provider that scripts/e2e.sh starts
// (packages/testing/src/oidc/: "otto" is in risk-oncall, mapped by the demo seed to operator of Risk &
// Fraud; "mallory" is only in contractors, mapped to nothing). Otto lands in his mapped team with the
// mapped role; Mallory gets the "no access" page and no account.
import type { Page } from "@playwright/test";
import { databaseUrl, expect, screenshot, test } from "./fixtures";

async function signInThroughProvider(page: Page, user: string): Promise<void> {
  await page.goto("/sign-in");
  await page.getByRole("button", { name: "Sign in with Test IdP" }).click();
  await expect(page.getByRole("heading", { name: "Test identity provider" })).toBeVisible();
  await page.getByLabel("Username").fill(user);
  await page.getByRole("button", { name: "Sign in" }).click();
}

test.describe("single sign-on", () => {
  test.skip(!databaseUrl, "needs scripts/e2e.sh (it starts the identity provider)");

  test("the password form stays, and single sign-on is offered because it is configured", async ({
    page,
  }) => {
    await page.goto("/sign-in");
    await expect(page.getByLabel("Password")).toBeVisible();
    await expect(page.getByRole("button", { name: "Sign in with Test IdP" })).toBeVisible();
  });

  test("a first sign-in through the provider lands in the mapped team with the mapped role", async ({
    page,
    db,
  }) => {
    await signInThroughProvider(page, "otto");
    await page.waitForURL(/\/pipelines$/);
    const user = page.getByTestId("signed-in-user");
    await expect(user.getByText("Otto On-call")).toBeVisible();
    await expect(user.getByText("operator", { exact: true })).toBeVisible();
    await page.goto("/account");
    await expect(page.getByTestId("account-teams").filter({ hasText: "Risk & Fraud" })).toBeVisible();
    await expect(page.getByText("You sign in with single sign-on")).toBeVisible();
    await screenshot(page, "sso-signed-in.png");

    const { rows } = await db.query(
      `SELECT u.role, t.slug, m.source FROM users u JOIN team_members m ON m.user_id = u.id JOIN teams t ON t.id = m.team_id WHERE u.email = 'otto@idp.example'`,
    );
    expect(rows).toEqual([{ role: "operator", slug: "risk", source: "sso" }]);
  });

  test("a user whose groups map to nothing gets a clear no-access page and no account", async ({
    page,
    db,
  }) => {
    await signInThroughProvider(page, "mallory");
    await page.waitForURL(/\/sign-in\/problem\?error=no_access/);
    await expect(page.getByRole("heading", { name: "No access to Sluice" })).toBeVisible();
    await expect(page.getByText("your groups (contractors) are not mapped")).toBeVisible();
    await screenshot(page, "sso-no-access.png");
    await page.goto("/pipelines");
    await page.waitForURL(/\/sign-in\?next=%2Fpipelines$/);
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM users WHERE email = 'mallory@idp.example'`,
    );
    expect(rows[0].n).toBe(0);
  });
});
