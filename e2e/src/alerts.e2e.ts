// Alerts in the browser against the real stack of scripts/e2e.sh (two workers evaluating every 2 s):
// a pipeline of Payments Data fails, the workers' evaluator fires its batch_failures rule, the team's
// on-call webhook (a real HTTP receiver in this process) gets exactly one Slack-shaped notification
// with the pipeline and its link, and the firing alert shows on the fleet view, the Alerts page and the
// pipeline page. An operator acknowledges it and silences the pipeline from the browser (checked in
// Postgres); a viewer sees the controls disabled and the server refuses them (403).
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { Browser, Page } from "playwright-core";
import { launchBrowser } from "./browser";
import { assertConsoleReachable, baseUrl } from "./console-url";
import { signedIn } from "./sign-in";
import { sleep, until } from "./until";

const databaseUrl = process.env.SLUICE_E2E_DATABASE_URL;
const here = path.dirname(fileURLToPath(import.meta.url));
const resultsDir = path.resolve(here, "../test-results");
const skip = databaseUrl ? false : "needs the running stack of scripts/e2e.sh (SLUICE_E2E_DATABASE_URL)";
const PIPELINE = "e2e-alerting";
const PASSWORD = process.env.SLUICE_DEMO_PASSWORD ?? "sluice-demo";

let browser: Browser;
let db: pg.Client;
let receiver: http.Server;
const received: { key: string; body: { text: string; blocks: unknown[] } }[] = [];

const screenshot = async (page: Page, name: string) => {
  mkdirSync(resultsDir, { recursive: true });
  await page.screenshot({ path: path.join(resultsDir, name), fullPage: true, timeout: 90_000 });
};

const episode = async () =>
  (
    await db.query<{ id: string; state: string; acknowledged_by: string | null; ack_note: string | null }>(
      `SELECT e.id::text, e.state, e.acknowledged_by, e.ack_note FROM alert_episodes e JOIN alert_rules r ON r.id = e.rule_id JOIN pipelines p ON p.id = r.pipeline_id
        WHERE p.name = $1 AND r.kind = 'batch_failures' ORDER BY e.id DESC LIMIT 1`,
      [PIPELINE],
    )
  ).rows[0];

describe("alerts in the browser", { skip }, () => {
  let operator: Page;

  before(async () => {
    await assertConsoleReachable();
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    receiver = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push({ key: String(req.headers["x-sluice-notification"]), body: JSON.parse(body) });
        res.writeHead(200).end("ok");
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/oncall`;
    await db.query(
      `INSERT INTO contact_points (id, team_id, name, kind, secret_value, created_by)
       SELECT 'cp-e2e-alerts', id, '#e2e-alerts', 'slack', $1, 'e2e' FROM teams WHERE slug = 'payments-data'`,
      [hook],
    );
    // A Payments Data pipeline that failed: what the workers leave when a batch hits a permanent error.
    await db.query(`
      WITH team AS (SELECT id FROM teams WHERE slug = 'payments-data'),
           p AS (INSERT INTO pipelines (id, name, description, owner_team_id) SELECT 'p-e2e-alerting', '${PIPELINE}', 'fails for the alerts test', id FROM team RETURNING id),
           v AS (INSERT INTO pipeline_versions (id, pipeline_id, version, spec, spec_hash) SELECT 'pv-e2e-alerting', id, 1, '{"name":"${PIPELINE}","trigger":{"every":"2s"}}', 'e2e-alerting' FROM p RETURNING id)
      INSERT INTO pipeline_runs (pipeline_version_id, desired_state, status, consecutive_failures, last_error, last_error_at)
      SELECT id, 'running', 'failed', 5, 'relation "e2e_alerting" does not exist (SQLSTATE 42P01)', now() FROM v`);
    browser = await launchBrowser();
    operator = await signedIn(browser, "operator@sluice.local", { password: PASSWORD, width: 1440 });
  });

  after(async () => {
    await db?.query(`DELETE FROM contact_points WHERE id = 'cp-e2e-alerts'`).catch(() => undefined);
    // Leave no failed pipeline behind for the other browser tests.
    await db
      ?.query(
        `UPDATE pipeline_runs SET status = 'stopped', desired_state = 'stopped', consecutive_failures = 0 WHERE pipeline_version_id = 'pv-e2e-alerting'`,
      )
      .catch(() => undefined);
    await browser?.close();
    await db?.end();
    await new Promise((r) => receiver?.close(r));
  });

  test("the workers fire once: one Slack-shaped notification with the pipeline, the value and its link", async () => {
    await until("the firing notification", 90_000, async () =>
      received.some((r) => r.body.text.includes(PIPELINE)),
    );
    await sleep(6000); // three more evaluations: still one
    const mine = received.filter((r) => r.body.text.includes(PIPELINE));
    assert.equal(mine.length, 1, JSON.stringify(mine.map((r) => r.key)));
    assert.match(
      mine[0]!.body.text,
      new RegExp(
        `^\\[FIRING\\] critical Pipeline failed or batches failing on ${PIPELINE} v1: pipeline failed: relation "e2e_alerting" does not exist \\(SQLSTATE 42P01\\) — ${baseUrl.replace(/[.]/g, "\\.")}/pipelines/${PIPELINE}$`,
      ),
    );
    assert.ok(Array.isArray(mine[0]!.body.blocks) && mine[0]!.body.blocks.length >= 3);
    assert.equal((await episode())?.state, "firing");
  });

  test("the firing alert shows on the fleet view, the Alerts page and the pipeline page", async () => {
    await operator.goto("/pipelines");
    const badge = operator.getByTestId(`fleet-row-${PIPELINE}`).getByTestId("firing-alerts-fleet-row");
    await badge.filter({ hasText: "1 firing" }).waitFor();
    await screenshot(operator, "alerts-fleet.png");

    await operator.goto("/alerts");
    const id = (await episode())!.id;
    const alert = operator.getByTestId(`alert-${id}`);
    await alert.waitFor();
    assert.equal(await alert.getAttribute("data-state"), "firing");
    assert.equal(await alert.getAttribute("data-kind"), "batch_failures");
    assert.match(
      await alert.getByTestId("alert-summary").innerText(),
      /pipeline failed: relation "e2e_alerting" does not exist/,
    );
    assert.equal(await alert.getByTestId("alert-value").innerText(), "5");
    await alert
      .getByTestId("alert-delivery")
      .filter({ hasText: "fire to #e2e-alerts (slack) delivered" })
      .waitFor();
    // Problems first: no resolved alert is listed above a firing one.
    const states = await operator
      .getByTestId("alerts-list")
      .locator("> li")
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-state")));
    assert.deepEqual(
      states,
      [...states].sort(
        (a, b) =>
          ["firing", "acknowledged", "resolved"].indexOf(a!) -
          ["firing", "acknowledged", "resolved"].indexOf(b!),
      ),
    );
    await screenshot(operator, "alerts-page.png");

    await operator.goto(`/pipelines/${PIPELINE}`);
    const section = operator.getByTestId("pipeline-alerts");
    await section.getByTestId(`alert-${id}`).waitFor();
    await operator.getByTestId("firing-alerts-pipeline-header").filter({ hasText: "1 firing" }).waitFor();
    await section.getByTestId("alert-rules").locator("summary").click();
    await section.getByTestId("rule-batch_failures").waitFor();
    await screenshot(operator, "alerts-pipeline-page.png");
  });

  test("an operator acknowledges from the Alerts page and silences the pipeline from its page", async () => {
    const id = (await episode())!.id;
    await operator.goto("/alerts");
    const alert = operator.getByTestId(`alert-${id}`);
    await alert.getByLabel("Note").fill("restoring the table");
    await alert.getByRole("button", { name: "Acknowledge" }).click();
    await until(
      "the acknowledgement",
      20_000,
      async () => (await alert.getAttribute("data-state")) === "acknowledged",
    );
    assert.equal(await alert.getByTestId("alert-acked-by").innerText(), "operator@sluice.local");
    assert.deepEqual(await episode(), {
      id,
      state: "acknowledged",
      acknowledged_by: "operator@sluice.local",
      ack_note: "restoring the table",
    });

    await operator.goto(`/pipelines/${PIPELINE}`);
    const section = operator.getByTestId("pipeline-alerts");
    const row = section.getByTestId(`alert-${id}`);
    await row.getByLabel("Silence for").selectOption({ label: "4 hours" });
    await row.getByLabel("Silence reason").fill("table restore in progress");
    await row.getByRole("button", { name: "Silence pipeline" }).click();
    await section.getByTestId("alert-silences").getByText("table restore in progress").waitFor();
    await row.getByTestId("alert-silenced").waitFor();
    const s = await db.query<{ reason: string; created_by: string; hours: string }>(
      `SELECT reason, created_by, round(extract(epoch FROM expires_at - created_at) / 3600)::text AS hours FROM alert_silences WHERE pipeline_id = 'p-e2e-alerting' AND ended_at IS NULL`,
    );
    assert.deepEqual(s.rows, [
      { reason: "table restore in progress", created_by: "operator@sluice.local", hours: "4" },
    ]);
    const audited = await db.query(
      `SELECT action FROM audit_events WHERE actor = 'operator@sluice.local' AND action LIKE 'alert.%' ORDER BY id`,
    );
    assert.deepEqual(audited.rows.map((r) => r.action).slice(-2), ["alert.acknowledge", "alert.silence"]);
    await screenshot(operator, "alerts-acknowledged-silenced.png");
  });

  test("a viewer sees the alert but can neither acknowledge nor silence it", async () => {
    const viewer = await signedIn(browser, "viewer@sluice.local", { password: PASSWORD, width: 1440 });
    const context = viewer.context();
    try {
      // A fresh firing alert for the viewer to face (the one above is acknowledged).
      await db.query(
        `UPDATE alert_episodes SET state = 'firing', acknowledged_at = NULL, acknowledged_by = NULL WHERE id = $1`,
        [(await episode())!.id],
      );
      const id = (await episode())!.id;
      await viewer.goto("/alerts");
      const alert = viewer.getByTestId(`alert-${id}`);
      await alert.waitFor();
      assert.equal(await alert.getByRole("button", { name: "Acknowledge" }).isDisabled(), true);
      assert.equal(await alert.getByRole("button", { name: "Silence pipeline" }).isDisabled(), true);
      await alert.getByText("Responding to alerts needs the operator role").waitFor();
      // The server refuses too, whatever the page shows.
      const status = await viewer.evaluate(
        async (input) => {
          const res = await fetch("/api/trpc/alert.acknowledge", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ json: input }),
          });
          return res.status;
        },
        { episodeId: id, pipeline: PIPELINE, note: "viewer tries" },
      );
      assert.equal(status, 403);
      assert.equal((await episode())?.state, "firing");
      await screenshot(viewer, "alerts-viewer.png");
    } finally {
      await context.close();
    }
  });
});
