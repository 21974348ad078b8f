// On-call that really pages, in the browser against the running stack and its demo on-call receiver
// (the quick start's, or scripts/e2e.sh's on ports of its own): an operator pauses the pipeline from
// its page; its backlog grows while input is steady, backlog_growing fires, and the receiver — which
// checks each format as Slack, PagerDuty and an SMTP server would — gets a PagerDuty trigger, a Slack
// message and an email. The operator acknowledges in the console: PagerDuty gets `acknowledge` with the
// same dedup key, Slack a message, the email lands in the same thread; resolving sends `resolve` (the
// incident resolves). The receiver's page (what a person opens to see what was paged) is screenshotted.
// Runs against the quick start too: SLUICE_URL, SLUICE_E2E_DATABASE_URL, SLUICE_E2E_PIPELINE=payments-ledger,
// SLUICE_E2E_RECEIVER_URL=http://127.0.0.1:4010.
import type { Page } from "@playwright/test";
import { databaseUrl, expect, screenshot, test } from "./fixtures";

const receiverUrl = process.env.SLUICE_E2E_RECEIVER_URL;
const pipeline = process.env.SLUICE_E2E_PIPELINE;

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

test.describe("on-call paging through the demo receiver", () => {
  test.skip(
    !databaseUrl || !receiverUrl || !pipeline,
    "needs the running stack and its demo receiver (SLUICE_E2E_DATABASE_URL, SLUICE_E2E_RECEIVER_URL, SLUICE_E2E_PIPELINE)",
  );

  test.beforeEach(async ({ db, signIn }) => {
    // The stack's default `for` (60 s) would make this test wait a minute more; the rule is the same.
    await db.query(
      `UPDATE alert_rules SET for_seconds = 10, clear_for_seconds = 30 FROM pipelines p WHERE p.id = alert_rules.pipeline_id AND p.name = $1 AND kind = 'backlog_growing'`,
      [pipeline],
    );
    before0 = Math.max(0, ...(await received()).pages.map((p) => p.n));
    operator = await signIn("operator@sluice.local", { width: 1280, height: 800 });
  });
  test.afterEach(async () => {
    await lifecycle("Resume", "e2e: on-call test done").catch(() => undefined);
  });

  test("a paused pipeline pages PagerDuty, Slack and email; ack and resolve in the console reach them", async () => {
    test.setTimeout(300_000);
    await lifecycle("Pause", "e2e: on-call drill");
    let fired: { trigger: TPage; slack: TPage; email: TPage } | undefined;
    await expect
      .poll(
        async () => {
          const pages = await mine();
          const trigger = pages.find(
            (p) =>
              p.channel === "pagerduty" && p.action === "trigger" && p.summary.includes("Backlog growing"),
          );
          const slack = pages.find((p) => p.channel === "slack" && p.action === "FIRING");
          const email = pages.find((p) => p.channel === "email" && p.action === "FIRING");
          fired = trigger && slack && email ? { trigger, slack, email } : undefined;
          return fired !== undefined;
        },
        { message: "the page to reach PagerDuty, Slack and email", timeout: 240_000, intervals: [2000] },
      )
      .toBe(true);
    const { trigger, slack, email } = fired!;
    expect(trigger.key).toMatch(/^sluice-alert-\d+$/);
    expect(slack.summary).toMatch(
      new RegExp(`^\\[FIRING\\] critical Backlog growing while input is steady on ${pipeline} v\\d+`),
    );
    expect(email.summary).toMatch(
      new RegExp(`^\\[FIRING\\] critical Backlog growing while input is steady on ${pipeline} v\\d+$`),
    );
    const alertId = trigger.key.replace("sluice-alert-", "");

    await operator.goto("/alerts");
    const alert = operator.getByTestId(`alert-${alertId}`);
    // The backlog was caused on purpose: the alert says who paused it, when and why; its value has a unit.
    await expect(alert.getByTestId("alert-summary")).toContainText(
      /paused by operator@sluice\.local \d+ min ago: “e2e: on-call drill” — resume it to drain/,
    );
    await expect(alert.getByTestId("alert-value")).toHaveText(/^[\d.,]+ (s|min|h)$/);
    await expect(
      alert
        .getByTestId("alert-delivery")
        .filter({ hasText: /fire to PagerDuty \(demo\) \(pagerduty\) delivered/ }),
    ).toBeVisible();
    await screenshot(operator, "on-call-alert-firing.png");
    await alert.getByLabel("Note").fill("on it: paused for the drill");
    await alert.getByRole("button", { name: "Acknowledge" }).click();
    await expect
      .poll(
        async () => {
          const pages = await mine();
          return (
            pages.some(
              (p) => p.channel === "pagerduty" && p.action === "acknowledge" && p.key === trigger.key,
            ) &&
            pages.some((p) => p.channel === "slack" && p.action === "ACKNOWLEDGED") &&
            pages.some(
              (p) => p.channel === "email" && p.action === "ACKNOWLEDGED" && p.body.inReplyTo === email.key,
            )
          );
        },
        { message: "PagerDuty acknowledge with the same dedup key, Slack and email", timeout: 60_000 },
      )
      .toBe(true);
    expect((await received()).incidents[trigger.key]?.state).toBe("acknowledged");
    const ack = (await mine()).find((p) => p.channel === "slack" && p.action === "ACKNOWLEDGED")!;
    expect(ack.summary).toMatch(/by operator@sluice\.local: “on it: paused for the drill”/);

    await alert.getByRole("button", { name: "Resolve" }).click();
    await expect
      .poll(
        async () => {
          const pages = await mine();
          return (
            pages.some((p) => p.channel === "pagerduty" && p.action === "resolve" && p.key === trigger.key) &&
            pages.some((p) => p.channel === "slack" && p.action === "RESOLVED") &&
            pages.some((p) => p.channel === "email" && p.action === "RESOLVED")
          );
        },
        { message: "PagerDuty resolve, Slack and email", timeout: 60_000 },
      )
      .toBe(true);
    const incident = (await received()).incidents[trigger.key]!;
    expect(incident.state).toBe("resolved");
    expect(incident.events.slice(-2)).toEqual(["acknowledge", "resolve"]);

    // What a person opens to see what was paged.
    const receiverPage = await operator.context().newPage();
    await receiverPage.goto(`${receiverUrl}/`);
    await expect(receiverPage.getByRole("heading", { name: "What was paged" })).toBeVisible();
    expect(await receiverPage.locator("body").innerText()).toMatch(new RegExp(`${trigger.key}\\s+resolved`));
    await screenshot(receiverPage, "on-call-receiver.png");
    await receiverPage.close();
  });
});

test.describe("contact points on the Admin page", () => {
  test.skip(
    !databaseUrl || !receiverUrl,
    "needs the running stack and its demo receiver (SLUICE_E2E_DATABASE_URL, SLUICE_E2E_RECEIVER_URL)",
  );

  test("several per team; a test notification reaches the receiver, a refused one shows its error, both in the delivery history", async ({
    admin: page,
    db,
  }) => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await db.query(`DELETE FROM contact_points WHERE name = 'e2e refused mailbox'`);
    await page.goto("/admin");
    const team = page.getByTestId("team-payments-data");
    // The quick start's three: Slack, PagerDuty and email, each with its own test button.
    for (const name of ["#payments-data-oncall", "PagerDuty (demo)", "on-call mailbox"])
      await expect(
        team.getByTestId(`contact-point-${name}`).getByRole("button", { name: "Send test notification" }),
      ).toBeVisible();

    const before = Math.max(0, ...(await received()).pages.map((p) => p.n));
    const pd = team.getByTestId("contact-point-PagerDuty (demo)");
    await pd.getByRole("button", { name: "Send test notification" }).click();
    await expect(pd.getByText(/Test delivered \(HTTP 202\)\./)).toBeVisible();
    const sent = (await received()).pages.find((p) => p.n > before && p.channel === "pagerduty");
    expect(sent?.action).toBe("trigger");
    await pd.getByText(/Delivery history/).click();
    await expect(
      pd
        .getByRole("row")
        .filter({ hasText: /^.*test.*delivered.*$/ })
        .first(),
    ).toBeVisible();

    // A fourth contact point whose mailbox the SMTP server refuses: the test says why, and so does its history.
    await team.getByRole("button", { name: "Add a contact point" }).click();
    const form = team.getByRole("form", { name: "Add a contact point" });
    await form.getByLabel("Name").fill("e2e refused mailbox");
    await form.getByLabel("Kind").selectOption("email");
    await form.getByLabel("Recipients").fill("pager@refused.invalid");
    await form.getByRole("button", { name: "Add" }).click();
    const refused = team.getByTestId("contact-point-e2e refused mailbox");
    await refused.getByRole("button", { name: "Send test notification" }).click();
    await expect(refused.getByText(/Test not delivered: .*550/)).toBeVisible();
    await expect(refused.getByText(/last error .*550/)).toBeVisible();
    await refused.getByText(/Delivery history/).click();
    await expect(
      refused
        .getByRole("row")
        .filter({ hasText: /failed/ })
        .first(),
    ).toBeVisible();
    await screenshot(page, "on-call-contact-points.png");
    await db.query(`DELETE FROM contact_points WHERE name = 'e2e refused mailbox'`);
  });
});
