// Replaying a dead letter from the console, against the workers running the browser tests' ledger
// (scripts/e2e.sh: the demo producer sends ~1% malformed rows): the operator ticks a dead-lettered
// row, gives a reason and replays it; the answer names the request; the workers apply it in a replay
// batch and the row's status says into which batch, by whom, with what outcome (a row that is not
// JSON fails again: dead_letter). Postgres confirms the item was applied exactly once, in a batch
// whose progress record is a dead-letter replay.
import { databaseUrl, expect, test } from "./fixtures";

const OPERATOR = "operator@sluice.local";
const pipeline = process.env.SLUICE_E2E_PIPELINE ?? "e2e-ledger";

test.describe("dead-letter replay", () => {
  test.skip(!databaseUrl, "SLUICE_E2E_DATABASE_URL is not set (scripts/e2e.sh sets it)");

  test("the operator replays a dead letter; the workers apply it once and the row says into which batch", async ({
    signIn,
    db,
  }) => {
    const page = await signIn(OPERATOR, { width: 1280, height: 900, timeoutMs: 60_000 });
    await page.goto(`/pipelines/${pipeline}`);

    // A malformed row the producer sent, not yet replayed (the panel refreshes every 10 s).
    const rows = page.getByTestId("dead-letter-page");
    const row = rows
      .getByRole("row")
      .filter({ hasText: "dead letter" })
      .filter({ has: page.getByRole("checkbox", { disabled: false }) })
      .first();
    await expect(row).toBeVisible({ timeout: 60_000 });
    const box = row.getByRole("checkbox");
    const label = (await box.getAttribute("aria-label"))!;
    const id = Number(/dead letter (\d+)/.exec(label)![1]);
    await box.check();

    const form = page.getByTestId("dead-letter-actions");
    await form.getByLabel("Why").fill("e2e: replay after a look");
    await form.getByRole("button", { name: "Replay 1 selected", exact: true }).click();
    const result = form.getByTestId("replay-result");
    await expect(result).toHaveText(/Replay #\d+: 1 row\(s\) queued into version \d+/, { timeout: 60_000 });
    const replayId = Number(/Replay #(\d+)/.exec((await result.textContent())!)![1]);

    // The workers' next batch applies it; the row's status follows.
    const status = page
      .getByRole("row")
      .filter({ has: page.getByLabel(label) })
      .getByTestId("dead-letter-replay-status");
    await expect(status).toHaveText(
      new RegExp(`replayed into batch \\d+ of v\\d+ by ${OPERATOR.replace(".", "\\.")}`),
      { timeout: 90_000 },
    );
    await expect(status).toContainText("dead_letter");

    const items = await db.query<{
      status: string;
      outcome: string;
      batch_id: string;
      pipeline_version_id: string;
    }>(
      `SELECT status, outcome, batch_id, pipeline_version_id FROM dead_letter_replay_items WHERE replay_id = $1`,
      [replayId],
    );
    expect(items.rows.map((i) => [i.status, i.outcome])).toEqual([["applied", "dead_letter"]]);
    const batch = await db.query<{
      progress: { deadLetterReplay?: { replayIds: number[]; rows: number }; sources: unknown[] };
    }>(`SELECT progress FROM batch_log WHERE pipeline_version_id = $1 AND batch_id = $2`, [
      items.rows[0]!.pipeline_version_id,
      items.rows[0]!.batch_id,
    ]);
    expect(batch.rows[0]!.progress.deadLetterReplay).toEqual({ replayIds: [replayId], rows: 1 });
    expect(batch.rows[0]!.progress.sources).toEqual([]);
    // Failed again in the version that dead-lettered it: the same dead letter, not a second one.
    const again = await db.query(
      `SELECT count(*)::int AS n FROM dead_letters d JOIN dead_letters o ON o.id = $1 AND d.pipeline_version_id = o.pipeline_version_id AND d.partition = o.partition AND d."offset" = o."offset"`,
      [id],
    );
    expect(again.rows[0].n).toBe(1);
    const audit = await db.query(
      `SELECT outcome FROM audit_events WHERE action = 'deadletter.replay' AND reason = 'e2e: replay after a look'`,
    );
    expect(audit.rows.map((a) => a.outcome)).toEqual(["succeeded"]);
  });
});
