// On-call that really pages, in the browser against the running stack and its demo on-call receiver
// (the quick start's, or scripts/e2e.sh's on ports of its own): an operator pauses the pipeline from
// its page; its backlog grows while input is steady, backlog_growing fires, and the receiver — which
// checks each format as Slack, PagerDuty and an SMTP server would — gets a PagerDuty trigger, a Slack
// message and an email. The operator acknowledges in the console: PagerDuty gets `acknowledge` with the
// same dedup key, Slack a message, the email lands in the same thread; resolving sends `resolve` (the
// incident resolves). The receiver's page (what a person opens to see what was paged) is screenshotted.
// Runs against the quick start too: SLUICE_URL, SLUICE_E2E_DATABASE_URL, SLUICE_E2E_PIPELINE=payments-ledger,
// SLUICE_E2E_RECEIVER_URL=http://127.0.0.1:4010.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { Browser, Page } from "playwright-core";
import { launchBrowser } from "./browser";
import { assertConsoleReachable } from "./console-url";
import { signedIn } from "./sign-in";
import { until } from "./until";

const databaseUrl = process.env.SLUICE_E2E_DATABASE_URL;
const receiverUrl = process.env.SLUICE_E2E_RECEIVER_URL;
const pipeline = process.env.SLUICE_E2E_PIPELINE;
const resultsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../test-results");
const skip =
  databaseUrl && receiverUrl && pipeline
    ? false
    : "needs the running stack and its demo receiver (SLUICE_E2E_DATABASE_URL, SLUICE_E2E_RECEIVER_URL, SLUICE_E2E_PIPELINE)";

interface TPage {
  n: number;
  channel: "slack" | "pagerduty" | "webhook" | "email";
  to: string;
  action: string;
  key: string;
  summary: string;
  body: { inReplyTo?: string | null; payload?: { summary?: string } };
}
const received = async (): Promise<{
  pages: TPage[];
  incidents: Record<string, { state: string; events: string[] }>;
}> => (await fetch(`${receiverUrl}/pages.json`)).json() as never;

let browser: Browser;
let db: pg.Client;
let operator: Page;
let before0 = 0;
const mine = async () =>
  (await received()).pages.filter(
    (p) =>
      p.n > before0 &&
      (p.channel === "pagerduty"
        ? true
        : p.summary.includes(`Backlog growing while input is steady on ${pipeline} v`)),
  );

async function lifecycle(command: "Pause" | "Resume", reason: string): Promise<void> {
  await operator.goto(`/pipelines/${pipeline}`);
  await operator.getByTestId("lifecycle-actions").getByRole("button", { name: command, exact: true }).click();
  const form = operator.getByRole("form", { name: `${command} ${pipeline}` });
  await form.getByLabel(/Reason/).fill(reason);
  await form.getByRole("button", { name: `${command} now` }).click();
}

describe("on-call paging through the demo receiver", { skip }, () => {
  before(async () => {
    await assertConsoleReachable();
    mkdirSync(resultsDir, { recursive: true });
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    // The stack's default `for` (60 s) would make this test wait a minute more; the rule is the same.
    await db.query(
      `UPDATE alert_rules SET for_seconds = 10, clear_for_seconds = 30 FROM pipelines p WHERE p.id = alert_rules.pipeline_id AND p.name = $1 AND kind = 'backlog_growing'`,
      [pipeline],
    );
    before0 = Math.max(0, ...(await received()).pages.map((p) => p.n));
    browser = await launchBrowser();
    operator = await signedIn(browser, "operator@sluice.local", { width: 1280, height: 800 });
  });
  after(async () => {
    await lifecycle("Resume", "e2e: on-call test done").catch(() => undefined);
    await browser?.close();
    await db?.end();
  });

  test(
    "a paused pipeline pages PagerDuty, Slack and email; ack and resolve in the console reach them",
    { timeout: 300_000 },
    async () => {
      await lifecycle("Pause", "e2e: on-call drill");
      const fired = await until(
        "the page to reach PagerDuty, Slack and email",
        240_000,
        async () => {
          const pages = await mine();
          const trigger = pages.find(
            (p) =>
              p.channel === "pagerduty" && p.action === "trigger" && p.summary.includes("Backlog growing"),
          );
          const slack = pages.find((p) => p.channel === "slack" && p.action === "FIRING");
          const email = pages.find((p) => p.channel === "email" && p.action === "FIRING");
          return trigger && slack && email ? { trigger, slack, email } : undefined;
        },
        2000,
      );
      assert.match(fired.trigger.key, /^sluice-alert-\d+$/);
      assert.match(
        fired.slack.summary,
        new RegExp(`^\\[FIRING\\] critical Backlog growing while input is steady on ${pipeline} v\\d+`),
      );
      assert.match(
        fired.email.summary,
        new RegExp(`^\\[FIRING\\] critical Backlog growing while input is steady on ${pipeline} v\\d+$`),
      );
      const alertId = fired.trigger.key.replace("sluice-alert-", "");

      await operator.goto("/alerts");
      const alert = operator.getByTestId(`alert-${alertId}`);
      await alert
        .getByTestId("alert-delivery")
        .filter({ hasText: /fire to PagerDuty \(demo\) \(pagerduty\) delivered/ })
        .waitFor();
      await operator.screenshot({ path: path.join(resultsDir, "on-call-alert-firing.png"), fullPage: true });
      await alert.getByLabel("Note").fill("on it: paused for the drill");
      await alert.getByRole("button", { name: "Acknowledge" }).click();
      await until("PagerDuty acknowledge with the same dedup key, Slack and email", 60_000, async () => {
        const pages = await mine();
        return (
          pages.some(
            (p) => p.channel === "pagerduty" && p.action === "acknowledge" && p.key === fired.trigger.key,
          ) &&
          pages.some((p) => p.channel === "slack" && p.action === "ACKNOWLEDGED") &&
          pages.some(
            (p) =>
              p.channel === "email" && p.action === "ACKNOWLEDGED" && p.body.inReplyTo === fired.email.key,
          )
        );
      });
      assert.equal((await received()).incidents[fired.trigger.key]?.state, "acknowledged");
      const ack = (await mine()).find((p) => p.channel === "slack" && p.action === "ACKNOWLEDGED")!;
      assert.match(ack.summary, /by operator@sluice\.local: “on it: paused for the drill”/);

      await alert.getByRole("button", { name: "Resolve" }).click();
      await until("PagerDuty resolve, Slack and email", 60_000, async () => {
        const pages = await mine();
        return (
          pages.some(
            (p) => p.channel === "pagerduty" && p.action === "resolve" && p.key === fired.trigger.key,
          ) &&
          pages.some((p) => p.channel === "slack" && p.action === "RESOLVED") &&
          pages.some((p) => p.channel === "email" && p.action === "RESOLVED")
        );
      });
      const incident = (await received()).incidents[fired.trigger.key]!;
      assert.equal(incident.state, "resolved");
      assert.deepEqual(incident.events.slice(-2), ["acknowledge", "resolve"]);

      // What a person opens to see what was paged.
      const receiverPage = await operator.context().newPage();
      await receiverPage.goto(`${receiverUrl}/`);
      await receiverPage.getByRole("heading", { name: "What was paged" }).waitFor();
      assert.match(
        await receiverPage.locator("body").innerText(),
        new RegExp(`${fired.trigger.key}\\s+resolved`),
      );
      await receiverPage.screenshot({ path: path.join(resultsDir, "on-call-receiver.png"), fullPage: true });
      await receiverPage.close();
    },
  );
});
