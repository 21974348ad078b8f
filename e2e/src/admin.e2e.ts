// The Admin page in a real browser: an admin adds a person (with a one-time password shown once),
// maps an identity-provider group, sets a team's on-call contact (the webhook URL is never shown
// again); the new person signs in with the one-time password; a viewer finds no Admin area.
import { expect, screenshot, test } from "./fixtures";

test.describe("Admin page", () => {
  test("an admin adds a person, maps a group and sets an on-call contact; the person signs in with the one-time password", async ({
    admin: page,
    signIn,
  }) => {
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Admin" }).click();
    await expect(page.getByRole("heading", { level: 1, name: "Admin" })).toBeVisible();
    await expect(page.getByTestId("user-viewer@sluice.local")).toBeVisible();

    const add = page.getByRole("form", { name: "Add a person" });
    await add.getByLabel("Email").fill("not-an-email");
    await add.getByLabel("Name").fill("Pat Person");
    await add.getByRole("button", { name: "Add person" }).click();
    await expect(add.getByRole("alert").filter({ hasText: "Enter an email address" })).toBeVisible();

    await add.getByLabel("Email").fill("pat@sluice.local");
    await add.getByLabel("Role").selectOption("owner");
    await add.getByLabel("Team").selectOption({ label: "Risk & Fraud" });
    await add.getByRole("button", { name: "Add person" }).click();
    const created = add.getByRole("status").filter({ hasText: "One-time password" });
    await expect(created).toHaveText(/One-time password: \w+/);
    const oneTimePassword = /One-time password: (\w+)/.exec((await created.textContent()) ?? "")![1]!;
    await expect(page.getByTestId("user-pat@sluice.local").getByText("Risk & Fraud")).toBeVisible();

    const map = page.getByRole("form", { name: "Map a group" });
    await map.getByLabel("Group").fill("risk-engineers");
    await map.getByLabel("Role").selectOption("owner");
    await map.getByLabel("Team").selectOption({ label: "Risk & Fraud" });
    await map.getByRole("button", { name: "Map group" }).click();
    await expect(page.getByTestId("sso-risk-engineers").getByText("Risk & Fraud")).toBeVisible();

    const onCall = page.getByRole("form", { name: "On-call email of Risk & Fraud" });
    await onCall.getByLabel(/^On-call email/).fill("risk-pager@sluice.local");
    await onCall.getByRole("button", { name: "Save on-call email" }).click();
    await expect(onCall.getByText("On-call email saved.")).toBeVisible();
    const risk = page.getByTestId("team-risk");
    await risk.getByRole("button", { name: "Add a contact point" }).click();
    const form = risk.getByRole("form", { name: "Add a contact point" });
    await form.getByLabel("Name").fill("#risk-pager");
    await form.getByLabel("Kind").selectOption("slack");
    await form
      .getByLabel("Webhook URL", { exact: true })
      .fill("https://hooks.example.com/services/very-secret-token");
    await form.getByRole("button", { name: "Add" }).click();
    await expect(
      risk
        .getByTestId("contact-point-#risk-pager")
        .getByText("webhook URL stored (host hooks.example.com; never shown)"),
    ).toBeVisible();
    expect(await page.content()).not.toMatch(/very-secret-token/);
    await screenshot(page, "admin.png");

    const pat = await signIn("pat@sluice.local", { password: oneTimePassword });
    await expect(pat.getByTestId("signed-in-user").getByText("owner", { exact: true })).toBeVisible();
  });

  test("a viewer has no Admin area, and the page itself says it is for admins", async ({ viewer: page }) => {
    const nav = page.getByRole("navigation", { name: "Console" });
    await expect(nav.getByRole("link", { name: "Pipelines" })).toBeVisible();
    await expect(nav.getByRole("link", { name: "Admin" })).toHaveCount(0);
    await page.goto("/admin");
    await expect(page.getByRole("heading", { name: "Admins only" })).toBeVisible();
  });
});
