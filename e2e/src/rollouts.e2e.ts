// A blue/green rollout end to end (#20), on the real stack of scripts/e2e.sh: merchant settlements in
// 1-minute windows (blue, serving) change to 2-minute windows — the demo's 5 → 10 minutes, scaled so
// windows become final within the test. In the browser: green is started from the edit page from the
// topic's earliest offsets, catches up beside blue on the rollout page (both on the same charts, asserted
// on the plotted numbers), the workers' reconciliation compares them at the 2-minute grain, the owner
// asks for the promotion and an operator approves it; readers of the serving name then read green's table
// (asserted in Postgres, not the page). Then rolled back: blue serves again from its own checkpoint.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Page } from "@playwright/test";
import type pg from "pg";
import { databaseUrl, expect as baseExpect, screenshot, test, repoRoot, sluiceAsAdmin } from "./fixtures";

const WAIT_MS = 240_000;
const expect = baseExpect.configure({ timeout: WAIT_MS });

const topic = process.env.SLUICE_E2E_TOPIC;
// Starting a rollout is authoring (owners); approving it is an operator's call, never the requester's.
const REQUESTER = "owner@sluice.local";
const APPROVER = "oncall@sluice.local";

/** The settlements demo spec on the stack's topic, writing `table`, in windows of `window`. */
function settlementsSpec(name: string, table: string, window: string): string {
  return readFileSync(path.join(repoRoot, "demo/pipelines/merchant-settlements.yaml"), "utf8")
    .replace(/^name: merchant-settlements/m, `name: ${name}`)
    .replace("topic: payments,", `topic: ${topic},`)
    .replace("table: merchant_settlement_5m", `table: ${table}`)
    .replace("tumbling: 5m", `tumbling: ${window}`)
    .replace("watermarkDelay: 10m", "watermarkDelay: 5s")
    .replace("allowedLateness: 20m", "allowedLateness: 30s");
}

const cli = sluiceAsAdmin;

/** The physical table the serving name's view reads, from Postgres' own view definition. */
async function servedTable(db: pg.Client, table: string): Promise<string> {
  const res = await db.query<{ definition: string }>(
    `SELECT definition FROM pg_views WHERE schemaname = 'public' AND viewname = $1`,
    [table],
  );
  return res.rows[0]?.definition.match(/sluice_sinks\."([^"]+)"/)?.[1] ?? "";
}

/** The window sizes a reader of the serving name sees, in seconds. */
async function windowSeconds(db: pg.Client, table: string): Promise<number[]> {
  const res = await db.query<{ s: number }>(
    `SELECT DISTINCT extract(epoch FROM window_end - window_start)::int AS s FROM public.${table}`,
  );
  return res.rows.map((r) => r.s);
}

async function setEditor(page: Page, text: string): Promise<void> {
  await page.locator(".cm-content").click();
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(text);
}

test.describe("Blue/green rollouts", () => {
  test.skip(
    !databaseUrl || !topic,
    "needs the running stack of scripts/e2e.sh (SLUICE_E2E_DATABASE_URL, SLUICE_E2E_TOPIC)",
  );

  test("green from earliest catches up beside blue, is reconciled, promoted by a second operator, readers switch; then rolled back", async ({
    signIn,
    db,
  }) => {
    test.setTimeout(30 * 60_000);
    const id = Date.now().toString(36);
    const name = `e2e-rollout-${id}`;
    const table = `e2e_settle_${id}`;

    // Blue: registered and started from the CLI, serving.
    const blueFile = path.join(mkdtempSync(path.join(tmpdir(), "sluice-e2e-")), `${name}.yaml`);
    writeFileSync(blueFile, settlementsSpec(name, table, "1m"));
    await cli("start", blueFile, "e2e: blue");
    await expect
      .poll(async () => (await db.query(`SELECT count(*)::int AS n FROM public.${table}`)).rows[0].n, {
        message: "blue writes settlements readers see under the serving name",
      })
      .toBeGreaterThan(0);
    expect(await servedTable(db, table)).toBe(`${table}@v1`);

    const requester = await signIn(REQUESTER);
    await requester.goto(`/pipelines/${name}/rollout`);
    await expect(requester.getByText("No rollout yet")).toBeVisible();

    // Green: the same pipeline in 2-minute windows, started as a rollout from the edit page.
    await requester.goto(`/pipelines/${name}/edit`);
    await setEditor(requester, settlementsSpec(name, table, "2m"));
    const start = requester.getByTestId("rollout-start");
    await start.getByLabel("the topic's earliest offsets").check();
    await start.getByLabel(/keep blue's state and tables for a rollback/).fill("3");
    await start.getByLabel(/^Why/).fill("e2e: settle per 2 minutes instead of 1");
    await start.getByRole("button", { name: "Start the rollout" }).click();
    await requester.waitForURL(`**/pipelines/${name}/rollout`);

    const view = requester.getByTestId("rollout-view");
    await expect(view).toBeVisible();
    await expect(requester.getByTestId("rollout-blue")).toContainText("serving");
    await expect(requester.getByTestId("rollout-green-status")).toHaveText("running");
    // Blue was never stopped by starting green, and keeps serving.
    expect(await servedTable(db, table)).toBe(`${table}@v1`);
    await expect(requester.getByTestId("rollout-spec-diff")).toContainText("aggregate.window.tumbling");

    // Both versions on one chart: the processing chart plots blue's and green's committed rows.
    await expect
      .poll(
        async () => {
          const plotted = await requester
            .locator('[data-testid="chart-rollout-processing"]')
            .getAttribute("data-plotted")
            .catch(() => null);
          if (!plotted) return "no chart";
          const p = JSON.parse(plotted) as { series: Record<string, (number | null)[]> };
          const sum = (k: string) => (p.series[k] ?? []).reduce<number>((a, v) => a + (v ?? 0), 0);
          return sum("blue") > 0 && sum("green") > 0 ? "both" : `blue ${sum("blue")}, green ${sum("green")}`;
        },
        { message: "the processing chart plots both versions", intervals: [5_000] },
      )
      .toBe("both");

    // The workers reconcile the running rollout: compared at the 2-minute grain.
    const reconciliation = requester.getByTestId("reconciliation");
    await expect(reconciliation).toHaveAttribute("data-status", "compared");
    await expect(reconciliation).toContainText("per 2m");
    await expect(reconciliation.getByTestId("reconciliation-counts")).toBeVisible();
    // count_distinct cannot be rolled up from 1- to 2-minute windows: left out, with the reason.
    await expect(reconciliation).toContainText("customers");
    await expect(requester.getByTestId("rollout-label")).not.toContainText("catching up");
    await screenshot(requester, "rollout-side-by-side.png", { fullPage: true });

    // One operator asks for the promotion, another approves it. The workers reconcile every minute on a
    // live topic: late rows landing on either side of a batch boundary can make a reconciliation newer
    // than the request differ. The approval is then refused and names the way on — the requester cancels
    // and asks again, accepting the differences — which is what an operator does here.
    const approver = await signIn(APPROVER);
    for (let attempt = 1; ; attempt++) {
      await requester
        .getByTestId("rollout-actions")
        .getByRole("button", { name: "Request promotion" })
        .click();
      const form = requester.getByRole("form", { name: `Request promotion ${name}` });
      await form.getByLabel(/Reason/).fill("e2e: reconciled at the 2-minute grain");
      const accept = form.getByLabel(/I have read the differences/);
      if (await accept.isVisible()) await accept.check();
      await form.getByRole("button", { name: "Request promotion now" }).click();
      await expect(requester.getByTestId("rollout-label")).toContainText("promotion requested");
      const crId = (
        await db.query<{ id: string }>(
          `SELECT cr.id::text FROM change_requests cr JOIN pipelines p ON p.id = cr.pipeline_id
            WHERE p.name = $1 AND cr.kind = 'promotion' AND cr.status = 'pending'`,
          [name],
        )
      ).rows[0]!.id;
      expect(await servedTable(db, table), "nothing switches before the approval").toBe(`${table}@v1`);

      // … another approves it; readers of the serving name now read green's 2-minute windows.
      await approver.goto("/change-requests");
      const card = approver.getByTestId(`change-request-${crId}`);
      await card.getByLabel(/Note/).fill("e2e: the reconciliation explains every difference");
      await card.getByRole("button", { name: "Approve and apply" }).click();
      const status = card.getByTestId("change-status");
      const newDifferences = card.getByRole("alert").filter({ hasText: "ask again, accepting them" });
      await expect(status.filter({ hasText: "applied" }).or(newDifferences)).toBeVisible({ timeout: 60_000 });
      if ((await status.textContent()) === "applied") break;
      expect(attempt, "refused for differences found after each of two requests").toBeLessThan(3);
      await expect(status).toHaveText("pending");
      await requester.goto("/change-requests");
      const mine = requester.getByTestId(`change-request-${crId}`);
      await mine.getByRole("button", { name: "Cancel my request" }).click();
      await expect(mine.getByTestId("change-status")).toHaveText("cancelled");
      await requester.goto(`/pipelines/${name}/rollout`);
    }
    expect(await servedTable(db, table)).toBe(`${table}@v2`);
    expect(await windowSeconds(db, table)).toEqual([120]);
    const runs = await db.query<{ version: number; status: string }>(
      `SELECT v.version, r.status::text FROM pipeline_runs r JOIN pipeline_versions v ON v.id = r.pipeline_version_id
         JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1 ORDER BY v.version`,
      [name],
    );
    expect(runs.rows).toEqual([
      { version: 1, status: "stopped" },
      { version: 2, status: "running" },
    ]);
    await requester.reload();
    await expect(requester.getByTestId("rollout-label")).toContainText("promoted");
    await expect(requester.getByTestId("rollout-green")).toContainText("serving");
    // Blue is kept for a rollback for the 3 days asked for at the start.
    await expect(requester.getByTestId("rollout-kept")).toContainText(
      /Version 1 keeps its state and tables until .+ \(72 hours after the promotion\): roll back before then/,
    );
    await screenshot(requester, "rollout-promoted.png", { fullPage: true });

    // Roll back: blue serves again and resumes from its own checkpoint.
    await requester.getByTestId("rollout-actions").getByRole("button", { name: "Roll back" }).click();
    const back = requester.getByRole("form", { name: `Roll back ${name}` });
    await back.getByLabel(/Reason/).fill("e2e: roll back");
    await back.getByRole("button", { name: "Roll back now" }).click();
    await expect(requester.getByTestId("rollout-label")).toContainText("rolled back");
    await expect(requester.getByTestId("rollout-kept")).toContainText(
      /Version 2 keeps its state and tables until .+ \(72 hours after the rollback\)/,
    );
    expect(await servedTable(db, table)).toBe(`${table}@v1`);
    expect(await windowSeconds(db, table)).toEqual([60]);
    const audit = await db.query<{ action: string }>(
      `SELECT action FROM audit_events WHERE target_label = $1 AND action LIKE 'rollout.%' ORDER BY occurred_at`,
      [name],
    );
    expect(audit.rows.map((r) => r.action)).toEqual(
      expect.arrayContaining(["rollout.start", "rollout.rollback"]),
    );
    await screenshot(requester, "rollout-rolled-back.png", { fullPage: true });
  });
});
