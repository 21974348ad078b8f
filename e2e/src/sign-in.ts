// A page of its own (a fresh browser context: its own cookies) signed in as one person through the
// sign-in form, landed on the fleet. Tests that act as several people at once open one each.
import type { Browser, Page } from "playwright-core";
import { baseUrl } from "./console-url";

export const DEMO_PASSWORD = process.env.SLUICE_DEMO_PASSWORD ?? "sluice-demo";

export async function signedIn(
  browser: Browser,
  email: string,
  opts: { password?: string; width?: number; height?: number; timeoutMs?: number } = {},
): Promise<Page> {
  const context = await browser.newContext({
    baseURL: baseUrl,
    viewport: { width: opts.width ?? 1400, height: opts.height ?? 1000 },
    timezoneId: "UTC",
  });
  context.setDefaultTimeout(opts.timeoutMs ?? 20_000);
  const page = await context.newPage();
  await page.goto("/sign-in");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(opts.password ?? DEMO_PASSWORD);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(/\/pipelines$/);
  return page;
}
