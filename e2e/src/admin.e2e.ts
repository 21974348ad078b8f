// The Admin page in a real browser: an admin adds a person (with a one-time password shown once),
// maps an identity-provider group, sets a team's on-call contact (the webhook URL is never shown
// again); the new person signs in with the one-time password; a viewer finds no Admin area.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright-core";
import { launchBrowser } from "./browser";
import { assertConsoleReachable } from "./console-url";
import { signedIn } from "./sign-in";

const DEMO_PASSWORD = process.env.SLUICE_DEMO_PASSWORD ?? "sluice-demo";
const resultsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../test-results");
let browser: Browser;

describe("Admin page", () => {
  before(async () => {
    await assertConsoleReachable();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });

  test("an admin adds a person, maps a group and sets an on-call contact; the person signs in with the one-time password", async () => {
    const page = await signedIn(browser, "admin@sluice.local", {
      password: DEMO_PASSWORD,
      height: 900,
      timeoutMs: 15_000,
    });
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Admin" }).click();
    await page.getByRole("heading", { level: 1, name: "Admin" }).waitFor();
    await page.getByTestId("user-viewer@sluice.local").waitFor();

    const add = page.getByRole("form", { name: "Add a person" });
    await add.getByLabel("Email").fill("not-an-email");
    await add.getByLabel("Name").fill("Pat Person");
    await add.getByRole("button", { name: "Add person" }).click();
    await add.getByRole("alert").filter({ hasText: "Enter an email address" }).waitFor();

    await add.getByLabel("Email").fill("pat@sluice.local");
    await add.getByLabel("Role").selectOption("owner");
    await add.getByLabel("Team").selectOption({ label: "Risk & Fraud" });
    await add.getByRole("button", { name: "Add person" }).click();
    const created = await add.getByRole("status").filter({ hasText: "One-time password" }).textContent();
    const oneTimePassword = /One-time password: (\w+)/.exec(created ?? "")?.[1];
    assert.ok(oneTimePassword, `one-time password shown: ${created}`);
    await page.getByTestId("user-pat@sluice.local").getByText("Risk & Fraud").waitFor();

    const map = page.getByRole("form", { name: "Map a group" });
    await map.getByLabel("Group").fill("risk-engineers");
    await map.getByLabel("Role").selectOption("owner");
    await map.getByLabel("Team").selectOption({ label: "Risk & Fraud" });
    await map.getByRole("button", { name: "Map group" }).click();
    await page.getByTestId("sso-risk-engineers").getByText("Risk & Fraud").waitFor();

    const onCall = page.getByRole("form", { name: "On-call email of Risk & Fraud" });
    await onCall.getByLabel(/^On-call email/).fill("risk-pager@sluice.local");
    await onCall.getByRole("button", { name: "Save on-call email" }).click();
    await onCall.getByText("On-call email saved.").waitFor();
    const risk = page.getByTestId("team-risk");
    await risk.getByRole("button", { name: "Add a contact point" }).click();
    const form = risk.getByRole("form", { name: "Add a contact point" });
    await form.getByLabel("Name").fill("#risk-pager");
    await form.getByLabel("Kind").selectOption("slack");
    await form
      .getByLabel("Webhook URL", { exact: true })
      .fill("https://hooks.example.com/services/very-secret-token");
    await form.getByRole("button", { name: "Add" }).click();
    await risk
      .getByTestId("contact-point-#risk-pager")
      .getByText("webhook URL stored (host hooks.example.com; never shown)")
      .waitFor();
    assert.doesNotMatch(await page.content(), /very-secret-token/);

    mkdirSync(resultsDir, { recursive: true });
    await page.screenshot({ path: path.join(resultsDir, "admin.png"), fullPage: true });
    await page.context().close();

    const pat = await signedIn(browser, "pat@sluice.local", {
      password: oneTimePassword,
      height: 900,
      timeoutMs: 15_000,
    });
    await pat.getByTestId("signed-in-user").getByText("owner", { exact: true }).waitFor();
    await pat.context().close();
  });

  test("a viewer has no Admin area, and the page itself says it is for admins", async () => {
    const page = await signedIn(browser, "viewer@sluice.local", {
      password: DEMO_PASSWORD,
      height: 900,
      timeoutMs: 15_000,
    });
    assert.equal(
      await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Admin" }).count(),
      0,
    );
    await page.goto("/admin");
    await page.getByRole("heading", { name: "Admins only" }).waitFor();
    await page.context().close();
  });
});
