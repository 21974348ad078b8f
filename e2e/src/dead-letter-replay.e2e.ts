// Replaying a dead letter from the console, against the workers running the browser tests' ledger
// (scripts/e2e.sh: the demo producer sends ~1% malformed rows): the operator ticks a dead-lettered
// row, gives a reason and replays it; the answer names the request; the workers apply it in a replay
// batch and the row's status says into which batch, by whom, with what outcome (a row that is not
// JSON fails again: dead_letter). Postgres confirms the item was applied exactly once, in a batch
// whose progress record is a dead-letter replay.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import type { Browser, Page } from "playwright-core";
import { launchBrowser } from "./browser";
import { assertConsoleReachable, baseUrl } from "./console-url";

const OPERATOR = "operator@sluice.local";
const DEMO_PASSWORD = process.env.SLUICE_DEMO_PASSWORD ?? "sluice-demo";
const pipeline = process.env.SLUICE_E2E_PIPELINE ?? "e2e-ledger";
const databaseUrl = process.env.SLUICE_E2E_DATABASE_URL;

let browser: Browser;
let page: Page;

describe("dead-letter replay", () => {
  before(async () => {
    await assertConsoleReachable();
    browser = await launchBrowser();
    const context = await browser.newContext({ baseURL: baseUrl, viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(60_000);
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
  });

  test(
    "the operator replays a dead letter; the workers apply it once and the row says into which batch",
    { skip: !databaseUrl && "SLUICE_E2E_DATABASE_URL is not set (scripts/e2e.sh sets it)" },
    async () => {
      await page.goto("/sign-in");
      await page.getByLabel("Email").fill(OPERATOR);
      await page.getByLabel("Password").fill(DEMO_PASSWORD);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.waitForURL(/\/pipelines$/);
      await page.goto(`/pipelines/${pipeline}`);

      // A malformed row the producer sent, not yet replayed (the panel refreshes every 10 s).
      const rows = page.getByTestId("dead-letter-page");
      const row = rows
        .getByRole("row")
        .filter({ hasText: "dead letter" })
        .filter({ has: page.getByRole("checkbox", { disabled: false }) })
        .first();
      await row.waitFor();
      const box = row.getByRole("checkbox");
      const label = (await box.getAttribute("aria-label"))!;
      const id = Number(/dead letter (\d+)/.exec(label)![1]);
      await box.check();

      const form = page.getByTestId("dead-letter-actions");
      await form.getByLabel("Why").fill("e2e: replay after a look");
      await form.getByRole("button", { name: "Replay 1 selected", exact: true }).click();
      const result = form.getByTestId("replay-result");
      await result.filter({ hasText: /Replay #\d+: 1 row\(s\) queued into version \d+/ }).waitFor();
      const replayId = Number(/Replay #(\d+)/.exec((await result.textContent())!)![1]);

      // The workers' next batch applies it; the row's status follows.
      const status = page
        .getByRole("row")
        .filter({ has: page.getByLabel(label) })
        .getByTestId("dead-letter-replay-status");
      await status
        .filter({
          hasText: new RegExp(`replayed into batch \\d+ of v\\d+ by ${OPERATOR.replace(".", "\\.")}`),
        })
        .waitFor({ timeout: 90_000 });
      assert.match((await status.textContent())!, /dead_letter/);

      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      try {
        const items = await db.query<{
          status: string;
          outcome: string;
          batch_id: string;
          pipeline_version_id: string;
        }>(
          `SELECT status, outcome, batch_id, pipeline_version_id FROM dead_letter_replay_items WHERE replay_id = $1`,
          [replayId],
        );
        assert.deepEqual(
          items.rows.map((i) => [i.status, i.outcome]),
          [["applied", "dead_letter"]],
        );
        const batch = await db.query<{
          progress: { deadLetterReplay?: { replayIds: number[]; rows: number }; sources: unknown[] };
        }>(`SELECT progress FROM batch_log WHERE pipeline_version_id = $1 AND batch_id = $2`, [
          items.rows[0]!.pipeline_version_id,
          items.rows[0]!.batch_id,
        ]);
        assert.deepEqual(batch.rows[0]!.progress.deadLetterReplay, { replayIds: [replayId], rows: 1 });
        assert.deepEqual(batch.rows[0]!.progress.sources, []);
        // Failed again in the version that dead-lettered it: the same dead letter, not a second one.
        const again = await db.query(
          `SELECT count(*)::int AS n FROM dead_letters d JOIN dead_letters o ON o.id = $1 AND d.pipeline_version_id = o.pipeline_version_id AND d.partition = o.partition AND d."offset" = o."offset"`,
          [id],
        );
        assert.equal(again.rows[0].n, 1);
        const audit = await db.query(
          `SELECT outcome FROM audit_events WHERE action = 'deadletter.replay' AND reason = 'e2e: replay after a look'`,
        );
        assert.deepEqual(
          audit.rows.map((a) => a.outcome),
          ["succeeded"],
        );
      } finally {
        await db.end();
      }
    },
  );
});
