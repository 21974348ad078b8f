// Every action names its version (#20): a pipeline with two versions running side by side — v1, and v2
// registered with fresh state into a table of its own — on the real stack of scripts/e2e.sh. The fleet
// shows both (v1 marked "not serving"); on `?v=1` each lifecycle button (pause, resume, stop, start,
// restart) acts on version 1 and never on version 2, and on `?v=2` the other way round — asserted in
// pipeline_runs and audit_events, not on the page.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Page } from "@playwright/test";
import type pg from "pg";
import { databaseUrl, expect as baseExpect, screenshot, test, repoRoot, sluiceAsAdmin } from "./fixtures";

// The pipeline page re-renders its charts every few seconds; on a loaded 2-core machine finding an
// element in it has taken over 45 s (the config's default), so this file waits longer, never sleeps.
const WAIT_MS = 180_000;
const expect = baseExpect.configure({ timeout: WAIT_MS });

const topic = process.env.SLUICE_E2E_TOPIC;
const OPERATOR = "operator@sluice.local";

const cli = sluiceAsAdmin;

/** The ledger demo spec, renamed onto the stack's topic, writing `table`. */
function ledgerSpec(name: string, table: string): string {
  const spec = readFileSync(path.join(repoRoot, "demo/pipelines/payments-ledger.yaml"), "utf8")
    .replace(/^name: payments-ledger/m, `name: ${name}`)
    .replace("topic: payments,", `topic: ${topic},`)
    .replace("table: payments_ledger", `table: ${table}`);
  const file = path.join(mkdtempSync(path.join(tmpdir(), "sluice-e2e-")), `${table}.yaml`);
  writeFileSync(file, spec);
  return file;
}

/** Each version's run as `status/desired`, from the database. */
async function runs(db: pg.Client, name: string): Promise<Record<number, string>> {
  const res = await db.query<{ version: number; phase: string }>(
    `SELECT v.version, r.status::text || '/' || r.desired_state::text AS phase
       FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id JOIN pipeline_runs r ON r.pipeline_version_id = v.id
      WHERE p.name = $1 ORDER BY v.version`,
    [name],
  );
  return Object.fromEntries(res.rows.map((r) => [r.version, r.phase]));
}

type TButton = "Pause" | "Resume" | "Stop" | "Start" | "Restart";

/** Clicks a lifecycle button on the page's header, gives the reason, and waits for the page's phase. */
async function act(page: Page, name: string, version: number, button: TButton, phase: RegExp) {
  await page.getByTestId("lifecycle-actions").getByRole("button", { name: button, exact: true }).click();
  const form = page.getByRole("form", { name: `${button} ${name} version ${version}` });
  await expect(form, "the dialog names the version it acts on").toContainText(
    `${button} ${name} version ${version}`,
  );
  await form.getByLabel(/Reason/).fill(`e2e: ${button.toLowerCase()} v${version}`);
  await form.getByRole("button", { name: `${button} now` }).click();
  await expect(page.getByTestId("run-phase")).toHaveText(phase);
}

test.describe("Every action names its version", () => {
  test.skip(
    !databaseUrl || !topic,
    "needs the running stack of scripts/e2e.sh (SLUICE_E2E_DATABASE_URL, SLUICE_E2E_TOPIC)",
  );

  test("on ?v=N each lifecycle button acts on version N only; the fleet shows every running version", async ({
    signIn,
    db,
  }) => {
    test.setTimeout(45 * 60_000);
    const id = Date.now().toString(36);
    const name = `e2e-versions-${id}`;
    await cli("start", ledgerSpec(name, `e2e_versions_${id}_a`), "e2e: blue");
    await cli("start", ledgerSpec(name, `e2e_versions_${id}_b`), "--fresh-state", "e2e: beside it");
    try {
      expect(await runs(db, name)).toEqual({ 1: "running/running", 2: "running/running" });

      const page = await signIn(OPERATOR, { timeoutMs: WAIT_MS });
      // The fleet: v2 serves; v1 still runs and has a row of its own, marked and linked to its page.
      const old = page.getByTestId(`fleet-row-${name}-v1`);
      await expect(page.getByTestId(`fleet-row-${name}`)).toContainText("v2");
      await expect(old).toContainText("v1");
      await expect(old.getByTestId("fleet-not-serving")).toHaveText("not serving");
      await screenshot(page, "versions-fleet.png", { fullPage: false });
      await old.getByRole("link", { name }).click();
      await page.waitForURL(new RegExp(`/pipelines/${name}\\?v=1$`));

      await expect(page.getByTestId("pipeline-summary")).toContainText("Version 1 (not serving)");
      await expect(page.getByTestId("not-serving-notice")).toContainText("the serving version is v2");
      await expect(page.getByTestId("run-phase")).toHaveText("running");

      await act(page, name, 1, "Pause", /^(pausing|paused)$/);
      await expect
        .poll(() => runs(db, name))
        .toMatchObject({ 1: expect.stringMatching(/\/paused$/), 2: "running/running" });
      await act(page, name, 1, "Resume", /^running$/);
      expect(await runs(db, name)).toEqual({ 1: "running/running", 2: "running/running" });
      // The open dialog says which version and that it is not the serving one.
      await page.getByTestId("lifecycle-actions").getByRole("button", { name: "Stop", exact: true }).click();
      await expect(page.getByRole("form", { name: `Stop ${name} version 1` })).toContainText(
        `Stop ${name} version 1 (not the serving version).`,
      );
      await screenshot(page, "versions-stop-dialog.png", { fullPage: false });
      await page.getByRole("button", { name: "Cancel" }).click();
      await act(page, name, 1, "Stop", /^(stopping|stopped)$/);
      await expect
        .poll(() => runs(db, name), { timeout: WAIT_MS })
        .toEqual({
          1: "stopped/stopped",
          2: "running/running",
        });
      await act(page, name, 1, "Start", /^running$/);
      expect(await runs(db, name)).toEqual({ 1: "running/running", 2: "running/running" });

      // Restart applies to a failed version: stop v1, then mark it failed as a poison batch would.
      await act(page, name, 1, "Stop", /^(stopping|stopped)$/);
      await expect.poll(() => runs(db, name), { timeout: WAIT_MS }).toMatchObject({ 1: "stopped/stopped" });
      await db.query(
        `UPDATE pipeline_runs SET status = 'failed', desired_state = 'running', last_error = 'e2e: a failed batch'
          WHERE pipeline_version_id = (SELECT v.id FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1 AND v.version = 1)`,
        [name],
      );
      await page.reload();
      await expect(page.getByTestId("run-phase")).toHaveText("failed");
      await act(page, name, 1, "Restart", /^running$/);
      expect(await runs(db, name)).toEqual({ 1: "running/running", 2: "running/running" });

      // The serving version's page acts on version 2 only.
      await page.goto(`/pipelines/${name}?v=2`);
      await expect(page.getByTestId("pipeline-summary")).toContainText("Version 2 (serving)");
      await act(page, name, 2, "Pause", /^(pausing|paused)$/);
      await expect
        .poll(() => runs(db, name))
        .toMatchObject({ 1: "running/running", 2: expect.stringMatching(/\/paused$/) });
      await screenshot(page, "versions-v2-paused.png", { fullPage: false });

      const audit = await db.query<{ action: string; version: string; reason: string }>(
        `SELECT action, after->>'version' AS version, reason FROM audit_events
          WHERE target_label = $1 AND action LIKE 'pipeline.%' AND actor = $2 ORDER BY id`,
        [name, OPERATOR],
      );
      expect(audit.rows).toEqual([
        { action: "pipeline.pause", version: "1", reason: "e2e: pause v1" },
        { action: "pipeline.resume", version: "1", reason: "e2e: resume v1" },
        { action: "pipeline.stop", version: "1", reason: "e2e: stop v1" },
        { action: "pipeline.start", version: "1", reason: "e2e: start v1" },
        { action: "pipeline.stop", version: "1", reason: "e2e: stop v1" },
        { action: "pipeline.restart", version: "1", reason: "e2e: restart v1" },
        { action: "pipeline.pause", version: "2", reason: "e2e: pause v2" },
      ]);
    } finally {
      await cli("stop", `${name}@1`, "e2e: done").catch(() => undefined);
      await cli("stop", `${name}@2`, "e2e: done").catch(() => undefined);
    }
  });
});
