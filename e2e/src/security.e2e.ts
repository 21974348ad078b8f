// The console in a real browser, as an attacker's page would meet it: a page on another port of the
// same host (same site, so the session cookie goes along) tries to frame the signed-in fleet and must
// get nothing; the console itself still works under its Content-Security-Policy (sign-in, the fleet,
// a pipeline's page with its charts and graph, the editor) without a single policy violation; and the
// real server believes no client's X-Forwarded-For.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "@playwright/test";
import { baseUrl } from "./console-url";
import { expect, screenshot, test } from "./fixtures";

const pipeline = process.env.SLUICE_E2E_PIPELINE ?? "payments-ledger";

/** Collects every CSP violation the page reports (events and console messages) from its first script on. */
async function watchPolicy(page: Page): Promise<string[]> {
  const violations: string[] = [];
  page.on("console", (msg) => {
    if (/Content Security Policy|Refused to (load|execute|apply|frame|connect)/i.test(msg.text()))
      violations.push(`console: ${msg.text()}`);
  });
  await page.exposeFunction("__reportCsp", (v: string) => violations.push(`event: ${v}`));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) =>
      (window as unknown as { __reportCsp(v: string): void }).__reportCsp(
        `${e.violatedDirective} blocked ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}`,
      ),
    );
  });
  return violations;
}

test.describe("security in the browser", () => {
  test("framing: a page on another port of the same host cannot frame the signed-in console", async ({
    operator,
  }) => {
    // The attacker's page: same host, another port — same site, so the browser would send the cookie.
    const attacker = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(
        `<!doctype html><title>Win a prize</title><h1>Click the button!</h1>` +
          `<iframe id="victim" src="${baseUrl}/pipelines" width="1000" height="600"></iframe>`,
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
    try {
      const attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
      const refusals: string[] = [];
      operator.on("console", (msg) => refusals.push(msg.text()));
      // The operator is signed in (the fixture); the framed fleet would otherwise be theirs.
      await operator.goto(attackerUrl);
      await expect(operator.getByRole("heading", { name: "Click the button!" })).toBeVisible();
      // The browser refuses to render the console inside the frame, and says why.
      await expect.poll(() => refusals.join("\n")).toMatch(/frame-ancestors 'none'|X-Frame-Options.*deny/i);
      const frame = operator.frames().find((f) => f !== operator.mainFrame());
      expect(frame, "the iframe exists").toBeTruthy();
      expect(frame!.url()).not.toContain("/pipelines");
      await expect(operator.frameLocator("#victim").getByText("Pipelines")).toHaveCount(0);
      await screenshot(operator, "security-framing-refused.png");
    } finally {
      await new Promise<void>((resolve) => attacker.close(() => resolve()));
    }
  });

  test("csp: the console works under its Content-Security-Policy — sign-in, fleet, a pipeline's page, the editor — with no violation", async ({
    browser,
  }) => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    const violations = await watchPolicy(page);
    try {
      const signInPage = await page.goto("/sign-in");
      const csp = signInPage!.headers()["content-security-policy"] ?? "";
      expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]{20,}' 'strict-dynamic'/);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(signInPage!.headers()).toMatchObject({
        "x-content-type-options": "nosniff",
        "x-frame-options": "DENY",
        "referrer-policy": "same-origin",
      });
      // Over plain http there is no HSTS (it is sent when SLUICE_PUBLIC_URL is https).
      expect(signInPage!.headers()["strict-transport-security"]).toBeUndefined();
      // A fresh nonce per page.
      const again = await page.request.get("/sign-in");
      expect(again.headers()["content-security-policy"]).not.toBe(csp);

      // Hydration works: the sign-in form is React's, it signs in through fetch.
      await page.getByLabel("Email").fill("owner@sluice.local");
      await page.getByLabel("Password").fill(process.env.SLUICE_DEMO_PASSWORD ?? "sluice-demo");
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.waitForURL(/\/pipelines$/);
      await expect(page.getByTestId("fleet-table").getByRole("link", { name: pipeline })).toBeVisible();

      // A pipeline's page: charts (Recharts) and the graph (@xyflow/react) render their inline styles.
      await page.goto(`/pipelines/${pipeline}`);
      // (Generous: the page's signals are the heaviest queries of the console, on a shared machine.)
      await expect(page.getByTestId("chart-rates")).toBeVisible({ timeout: 180_000 });
      await expect(page.locator(".react-flow").first()).toBeVisible({ timeout: 180_000 });

      // The editor (CodeMirror injects its own style elements) and a server check of the draft.
      await page.goto("/pipelines/new");
      await expect(page.locator(".cm-content")).toBeVisible();
      await screenshot(page, "security-csp-editor.png", { fullPage: false });

      // API answers carry the headers too.
      const health = await page.request.get("/api/health");
      expect(health.headers()).toMatchObject({
        "x-content-type-options": "nosniff",
        "x-frame-options": "DENY",
      });

      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
  });

  test("spoofed x-forwarded-for at the real server: the audit log records the socket's address", async ({
    db,
  }) => {
    const email = `spoofer-${Date.now()}@example.com`;
    const res = await fetch(`${baseUrl}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: baseUrl, "x-forwarded-for": "203.0.113.99" },
      body: JSON.stringify({ email, password: "not-the-password" }),
    });
    expect(res.status).toBe(401);
    const { rows } = await db.query<{ ip_address: string }>(
      "SELECT ip_address FROM audit_events WHERE action = 'auth.sign_in' AND actor = $1",
      [email],
    );
    expect(rows).toEqual([{ ip_address: "127.0.0.1" }]);
  });
});
