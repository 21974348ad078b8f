// Alerts in the browser against the real stack of scripts/e2e.sh (two workers evaluating every 2 s):
// a pipeline of Payments Data fails, the workers' evaluator fires its batch_failures rule, the team's
// on-call webhook (a real HTTP receiver in this process) gets exactly one Slack-shaped notification
// with the pipeline and its link, and the firing alert shows on the fleet view, the Alerts page and the
// pipeline page. An operator acknowledges it and silences the pipeline from the browser (checked in
// Postgres); a viewer sees the controls disabled and the server refuses them (403).
// The tests go in order (the alert fires, is shown, acknowledged, then faced by a viewer): serial.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { Page } from "@playwright/test";
import type pg from "pg";
import { baseUrl } from "./console-url";
import { databaseUrl, expect, screenshot, signedIn, test } from "./fixtures";

const PIPELINE = "e2e-alerting";

let db: pg.Client;
let receiver: http.Server;
const received: { key: string; body: { text: string; blocks: unknown[] } }[] = [];

const episode = async () =>
  (
    await db.query<{ id: string; state: string; acknowledged_by: string | null; ack_note: string | null }>(
      `SELECT e.id::text, e.state, e.acknowledged_by, e.ack_note FROM alert_episodes e JOIN alert_rules r ON r.id = e.rule_id JOIN pipelines p ON p.id = r.pipeline_id
        WHERE p.name = $1 AND r.kind = 'batch_failures' ORDER BY e.id DESC LIMIT 1`,
      [PIPELINE],
    )
  ).rows[0];

test.describe("alerts in the browser", () => {
  test.skip(!databaseUrl, "needs the running stack of scripts/e2e.sh (SLUICE_E2E_DATABASE_URL)");
  test.describe.configure({ mode: "serial" });
  let operator: Page;

  test.beforeAll(async ({ browser, db: client }) => {
    db = client;
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
    // A retry runs this again in a new worker process: start from nothing, so the alert fires anew
    // to this attempt's receiver (the pipeline's rules and episodes go with it).
    await db.query(`DELETE FROM contact_points WHERE id = 'cp-e2e-alerts'`);
    await db.query(`DELETE FROM pipelines WHERE id = 'p-e2e-alerting'`);
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
    // Alerts are evaluated on a pipeline's serving version; registering names it, this insert must too.
    await db.query(`UPDATE pipelines SET serving_version_id = 'pv-e2e-alerting' WHERE id = 'p-e2e-alerting'`);
    operator = await signedIn(browser, "operator@sluice.local", { width: 1440 });
  });

  test.afterAll(async () => {
    await db?.query(`DELETE FROM contact_points WHERE id = 'cp-e2e-alerts'`).catch(() => undefined);
    // Leave no failed pipeline behind for the other browser tests.
    await db
      ?.query(
        `UPDATE pipeline_runs SET status = 'stopped', desired_state = 'stopped', consecutive_failures = 0 WHERE pipeline_version_id = 'pv-e2e-alerting'`,
      )
      .catch(() => undefined);
    await operator?.context().close();
    await new Promise((r) => receiver?.close(r));
  });

  test("the workers fire once: one Slack-shaped notification with the pipeline, the value and its link", async () => {
    await expect
      .poll(() => received.some((r) => r.body.text.includes(PIPELINE)), {
        message: "the firing notification",
        timeout: 90_000,
      })
      .toBe(true);
    await sleep(6000); // three more evaluations: still one
    const mine = received.filter((r) => r.body.text.includes(PIPELINE));
    expect(mine.length, JSON.stringify(mine.map((r) => r.key))).toBe(1);
    expect(mine[0]!.body.text).toMatch(
      new RegExp(
        `^\\[FIRING\\] critical Pipeline failed or batches failing on ${PIPELINE} v1: pipeline failed: relation "e2e_alerting" does not exist \\(SQLSTATE 42P01\\) — ${baseUrl.replace(/[.]/g, "\\.")}/pipelines/${PIPELINE}$`,
      ),
    );
    expect(Array.isArray(mine[0]!.body.blocks) && mine[0]!.body.blocks.length >= 3).toBe(true);
    expect((await episode())?.state).toBe("firing");
  });

  test("the firing alert shows on the fleet view, the Alerts page and the pipeline page", async () => {
    await operator.goto("/pipelines");
    const badge = operator.getByTestId(`fleet-row-${PIPELINE}`).getByTestId("firing-alerts-fleet-row");
    await expect(badge.filter({ hasText: "1 firing" })).toBeVisible();
    await screenshot(operator, "alerts-fleet.png");

    await operator.goto("/alerts");
    const id = (await episode())!.id;
    const alert = operator.getByTestId(`alert-${id}`);
    await expect(alert).toHaveAttribute("data-state", "firing");
    await expect(alert).toHaveAttribute("data-kind", "batch_failures");
    await expect(alert.getByTestId("alert-summary")).toContainText(
      /pipeline failed: relation "e2e_alerting" does not exist/,
    );
    await expect(alert.getByTestId("alert-value")).toHaveText("5 failed attempts");
    await expect(
      alert.getByTestId("alert-delivery").filter({ hasText: "fire to #e2e-alerts (slack) delivered" }),
    ).toBeVisible();
    // Problems first: no resolved alert is listed above a firing one.
    const states = await operator
      .getByTestId("alerts-list")
      .locator("> li")
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-state")));
    expect(states).toEqual(
      [...states].sort(
        (a, b) =>
          ["firing", "acknowledged", "resolved"].indexOf(a!) -
          ["firing", "acknowledged", "resolved"].indexOf(b!),
      ),
    );
    await screenshot(operator, "alerts-page.png");

    await operator.goto(`/pipelines/${PIPELINE}`);
    const section = operator.getByTestId("pipeline-alerts");
    await expect(section.getByTestId(`alert-${id}`)).toBeVisible();
    await expect(
      operator.getByTestId("firing-alerts-pipeline-header").filter({ hasText: "1 firing" }),
    ).toBeVisible();
    await section.getByTestId("alert-rules").locator("summary").click();
    await expect(section.getByTestId("rule-batch_failures")).toBeVisible();
    await screenshot(operator, "alerts-pipeline-page.png");
  });

  test("an operator acknowledges from the Alerts page and silences the pipeline from its page", async () => {
    const id = (await episode())!.id;
    await operator.goto("/alerts");
    const alert = operator.getByTestId(`alert-${id}`);
    await alert.getByLabel("Note").fill("restoring the table");
    await alert.getByRole("button", { name: "Acknowledge" }).click();
    await expect(alert).toHaveAttribute("data-state", "acknowledged");
    await expect(alert.getByTestId("alert-acked-by")).toHaveText("operator@sluice.local");
    expect(await episode()).toEqual({
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
    await expect(section.getByTestId("alert-silences").getByText("table restore in progress")).toBeVisible();
    await expect(row.getByTestId("alert-silenced")).toBeVisible();
    const s = await db.query<{ reason: string; created_by: string; hours: string }>(
      `SELECT reason, created_by, round(extract(epoch FROM expires_at - created_at) / 3600)::text AS hours FROM alert_silences WHERE pipeline_id = 'p-e2e-alerting' AND ended_at IS NULL`,
    );
    expect(s.rows).toEqual([
      { reason: "table restore in progress", created_by: "operator@sluice.local", hours: "4" },
    ]);
    const audited = await db.query(
      `SELECT action FROM audit_events WHERE actor = 'operator@sluice.local' AND action LIKE 'alert.%' ORDER BY id`,
    );
    expect(audited.rows.map((r) => r.action).slice(-2)).toEqual(["alert.acknowledge", "alert.silence"]);
    await screenshot(operator, "alerts-acknowledged-silenced.png");
  });

  test("a viewer sees the alert but can neither acknowledge nor silence it", async ({ signIn }) => {
    const viewer = await signIn("viewer@sluice.local", { width: 1440 });
    // A fresh firing alert for the viewer to face (the one above is acknowledged).
    await db.query(
      `UPDATE alert_episodes SET state = 'firing', acknowledged_at = NULL, acknowledged_by = NULL WHERE id = $1`,
      [(await episode())!.id],
    );
    const id = (await episode())!.id;
    await viewer.goto("/alerts");
    const alert = viewer.getByTestId(`alert-${id}`);
    await expect(alert.getByRole("button", { name: "Acknowledge" })).toBeDisabled();
    await expect(alert.getByRole("button", { name: "Silence pipeline" })).toBeDisabled();
    await expect(alert.getByText("Responding to alerts needs the operator role")).toBeVisible();
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
    expect(status).toBe(403);
    expect((await episode())?.state).toBe("firing");
    await screenshot(viewer, "alerts-viewer.png");
  });
});
