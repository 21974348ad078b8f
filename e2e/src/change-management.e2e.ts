// Change management in a real browser against the stack scripts/e2e.sh starts (two workers running the
// e2e-ledger pipeline while the demo producer keeps sending): a pause and a resume with their reasons;
// a checkpoint reset to a time asked for by one operator, who cannot approve it (no button, and the
// API refuses it: four-eyes), approved and applied by another operator; the ledger then re-reads the
// events since that time and still holds each event id once; the batch history shows the
// discontinuity and the Audit page every step. A windowed pipeline of the test's own then shows that a
// reset which would double count its windows is refused with the reason. Screenshots in
// .data/test-results/screenshots/.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Page } from "@playwright/test";
import { databaseUrl, expect, screenshot, test, repoRoot, sluiceAsAdmin } from "./fixtures";

const pipeline = process.env.SLUICE_E2E_PIPELINE;
const topic = process.env.SLUICE_E2E_TOPIC;
const REQUESTER = "operator@sluice.local";
const APPROVER = "oncall@sluice.local";

const shot = (page: Page, name: string) => screenshot(page, `change-management-${name}.png`);

async function lifecycle(
  page: Page,
  command: "Pause" | "Resume",
  reason: string,
  phase: RegExp,
): Promise<void> {
  const actions = page.getByTestId("lifecycle-actions");
  await actions.getByRole("button", { name: command, exact: true }).click();
  const form = page.getByRole("form", { name: `${command} ${pipeline}` });
  await form.getByLabel(/Reason/).fill(reason);
  await form.getByRole("button", { name: `${command} now` }).click();
  await expect(page.getByTestId("run-phase")).toHaveText(phase, { timeout: 30_000 });
}

test.describe("Change management", () => {
  test.skip(
    !databaseUrl || !pipeline,
    "needs the running stack of scripts/e2e.sh (SLUICE_E2E_DATABASE_URL, SLUICE_E2E_PIPELINE)",
  );

  test("pause and resume from the pipeline page, each asking for a reason, recorded with who and why", async ({
    signIn,
    db,
  }) => {
    const page = await signIn(REQUESTER);
    await page.goto(`/pipelines/${pipeline}`);
    const phase = page.getByTestId("run-phase");
    await expect(phase).toHaveText("running", { timeout: 60_000 });
    // No reason: the browser keeps the form open (required) and nothing is sent.
    await page.getByTestId("lifecycle-actions").getByRole("button", { name: "Pause", exact: true }).click();
    await page.getByRole("button", { name: "Pause now" }).click();
    expect(await phase.textContent()).toBe("running");
    await page.getByRole("button", { name: "Cancel" }).click();
    await lifecycle(page, "Pause", "e2e: upstream maintenance", /^(pausing|paused)$/);
    await shot(page, "paused");
    await lifecycle(page, "Resume", "e2e: maintenance over", /^running$/);
    const history = page.getByTestId("pipeline-history");
    for (const text of [
      "pipeline.pause",
      "e2e: upstream maintenance",
      "pipeline.resume",
      "e2e: maintenance over",
    ])
      await expect(history, "the History panel lists both commands").toContainText(text);
    const rows = await db.query(
      `SELECT action, actor, reason FROM audit_events WHERE target_label = $1 AND action IN ('pipeline.pause', 'pipeline.resume') ORDER BY id`,
      [pipeline],
    );
    expect(rows.rows).toEqual([
      { action: "pipeline.pause", actor: REQUESTER, reason: "e2e: upstream maintenance" },
      { action: "pipeline.resume", actor: REQUESTER, reason: "e2e: maintenance over" },
    ]);
  });

  test("a checkpoint reset to a time: asked by one operator, refused to them, approved by another, applied; the ledger still holds each event once", async ({
    signIn,
    db,
  }) => {
    const version = await db.query<{ id: string }>(
      `SELECT v.id FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1 ORDER BY version DESC LIMIT 1`,
      [pipeline],
    );
    const versionId = version.rows[0]!.id;
    await expect
      .poll(
        async () =>
          Number(
            (await db.query(`SELECT count(*) FROM batch_log WHERE pipeline_version_id = $1`, [versionId]))
              .rows[0].count,
          ),
        { message: "a few committed batches", timeout: 60_000 },
      )
      .toBeGreaterThanOrEqual(3);
    const resetTo = new Date(Date.now() - 20_000);

    const requester = await signIn(REQUESTER);
    await requester.goto(`/pipelines/${pipeline}`);
    const form = requester.getByRole("form", { name: "Request a checkpoint reset" });
    await form.locator('select[name="kind"]').selectOption("timestamp");
    await form.locator('input[name="at"]').fill(resetTo.toISOString().slice(0, 19));
    await form.locator('input[name="reason"]').fill("e2e: re-read the last 20 seconds");
    await form.getByRole("button", { name: "Request reset" }).click();
    const notice = requester.getByTestId("checkpoint-reset").getByRole("status");
    await expect(notice).toHaveText(/#\d+/);
    const id = /#(\d+)/.exec((await notice.textContent()) ?? "")![1]!;
    await expect(notice.getByTestId("reset-result")).toHaveText(
      /Result: harmless for an append ledger: its key absorbs the \d+ re-read event\(s\)/,
    );
    await shot(requester, "reset-requested");

    // The requester sees no Approve, and the API refuses their approval whatever they send.
    await requester.goto("/change-requests");
    const card = requester.getByTestId(`change-request-${id}`);
    await expect(
      card.getByText("You asked for this: someone else must approve it (four-eyes)."),
    ).toBeVisible();
    await expect(card.getByRole("button", { name: "Approve and apply" })).toHaveCount(0);
    const self = await requester.evaluate(
      async ({ id, pipeline }) => {
        const res = await fetch("/api/trpc/change.approve", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ json: { id, pipeline } }),
        });
        return { status: res.status, body: await res.text() };
      },
      { id, pipeline: pipeline! },
    );
    expect(self.status).toBe(403);
    expect(self.body).toMatch(/someone else must approve it \(four-eyes rule, whatever your role\)/);
    await shot(requester, "self-approval-refused");

    const approver = await signIn(APPROVER);
    await approver.goto("/change-requests");
    const theirs = approver.getByTestId(`change-request-${id}`);
    await expect(theirs.getByTestId("reset-impact")).toBeVisible();
    await theirs.getByLabel(/Note/).fill("e2e: checked the impact");
    await theirs.getByRole("button", { name: "Approve and apply" }).click();
    await expect(theirs.getByTestId("change-status")).toHaveText("applied", { timeout: 30_000 });
    await expect(theirs.getByTestId("change-decision")).toContainText(`Approved by ${APPROVER}`);
    await shot(approver, "reset-applied");

    // The workers go on from the reset's offsets: the events since resetTo are read again.
    const reset = (
      await db.query<{
        after_batch_id: string;
        offsets_after: Record<string, number>;
        offsets_before: Record<string, number>;
      }>(
        `SELECT after_batch_id, offsets_after, offsets_before FROM checkpoint_resets WHERE change_request_id = $1`,
        [id],
      )
    ).rows[0]!;
    let next: { progress: { sources: { partition: number; startOffset: number }[] } } | undefined;
    await expect(async () => {
      next = (
        await db.query<NonNullable<typeof next>>(
          `SELECT progress FROM batch_log WHERE pipeline_version_id = $1 AND batch_id = $2`,
          [versionId, Number(reset.after_batch_id) + 1],
        )
      ).rows[0];
      expect(next, "a batch after the reset").toBeDefined();
    }).toPass({ timeout: 60_000 });
    for (const s of next!.progress.sources)
      expect(s.startOffset, `partition ${s.partition} starts at the reset's offset`).toBe(
        reset.offsets_after[String(s.partition)],
      );
    expect(
      Object.entries(reset.offsets_after).some(([p, o]) => o < reset.offsets_before[p]!),
      "the reset rewound at least one partition",
    ).toBe(true);
    await expect
      .poll(
        async () => {
          const cp = (
            await db.query<{ end_offsets: Record<string, number> }>(
              `SELECT end_offsets FROM checkpoints WHERE pipeline_version_id = $1`,
              [versionId],
            )
          ).rows[0]!;
          return Object.entries(reset.offsets_before).every(([p, o]) => (cp.end_offsets[p] ?? 0) >= o);
        },
        { message: "the re-read range to be committed again", timeout: 90_000 },
      )
      .toBe(true);
    // Exact: every row the batches say they wrote is in the ledger once, and the re-read events wrote
    // nothing new (their rows are the ones written before the reset; the re-reads were duplicates).
    const ledger = await db.query<{ rows: string; ids: string }>(
      `SELECT count(*) AS rows, count(DISTINCT event_id) AS ids FROM e2e_ledger`,
    );
    expect(ledger.rows[0]!.rows, "each event id once in the ledger").toBe(ledger.rows[0]!.ids);
    const written = await db.query<{ n: string }>(
      `SELECT coalesce(sum(sink_rows), 0)::text AS n FROM batch_log WHERE pipeline_version_id = $1`,
      [versionId],
    );
    expect(written.rows[0]!.n, "the ledger holds exactly the rows the batches wrote").toBe(
      ledger.rows[0]!.rows,
    );
    for (const [p, from] of Object.entries(reset.offsets_after)) {
      const rewritten = await db.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM e2e_ledger WHERE _partition = $1 AND _offset >= $2 AND _offset < $3 AND _batch_id > $4`,
        [Number(p), from, reset.offsets_before[p], reset.after_batch_id],
      );
      expect(rewritten.rows[0]!.n, `partition ${p}: no re-read event was written again`).toBe("0");
    }

    await approver.goto(`/pipelines/${pipeline}`);
    const resets = approver.getByTestId("checkpoint-resets");
    await expect(resets).toContainText(`${REQUESTER} / ${APPROVER}#${id}`);
    await shot(approver, "discontinuity");

    // Every step on the Audit page.
    await approver.goto("/audit");
    const filters = approver.getByRole("form", { name: "Filter the audit log" });
    await filters.getByLabel("Action").fill("change");
    await filters.getByRole("button", { name: "Filter" }).click();
    await expect
      .poll(
        () =>
          approver
            .getByTestId("audit-table")
            .locator("tbody tr")
            .evaluateAll((rows) =>
              rows.map(
                (r) => `${r.getAttribute("data-action")}${r.className.includes("problem") ? ":refused" : ""}`,
              ),
            ),
        { message: "the change steps on the Audit page" },
      )
      .toEqual(
        expect.arrayContaining([
          "change.request",
          "change.approve:refused",
          "change.approve",
          "change.apply",
        ]),
      );
    await shot(approver, "audit");
    const exported = await approver.evaluate(
      async () =>
        (await (
          await fetch(
            `/api/trpc/audit.exportCsv?input=${encodeURIComponent(JSON.stringify({ json: { action: "change" } }))}`,
          )
        ).json()) as { result: { data: { json: { csv: string } } } },
    );
    const csv = exported.result.data.json.csv;
    for (const a of ["change.request", "change.approve", "change.apply"])
      expect(csv, `CSV has ${a}`).toContain(`,${a},`);
  });

  test("a reset that would double count a windowed aggregate is refused with its reason, and never becomes a request", async ({
    signIn,
    db,
  }) => {
    // A windowed pipeline of its own on the stack's topic (the demo's settlements spec), started from the CLI.
    const name = `e2e-settlements-${Date.now().toString(36)}`;
    const spec = readFileSync(path.join(repoRoot, "demo/pipelines/merchant-settlements.yaml"), "utf8")
      .replace(/^name: merchant-settlements/m, `name: ${name}`)
      .replace("topic: payments,", `topic: ${topic},`)
      .replace("table: merchant_settlement_5m", `table: ${name.replace(/-/g, "_")}`);
    const specFile = path.join(mkdtempSync(path.join(tmpdir(), "sluice-e2e-")), `${name}.yaml`);
    writeFileSync(specFile, spec);
    const cli = sluiceAsAdmin;
    await cli("start", specFile, "e2e: a windowed pipeline to rewind");
    try {
      await expect
        .poll(
          async () =>
            (
              await db.query(
                `SELECT count(*)::int AS n FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1 AND b.input_rows > 0`,
                [name],
              )
            ).rows[0].n,
          { message: "the windowed pipeline's first batches", timeout: 90_000 },
        )
        .toBeGreaterThanOrEqual(2);
      const page = await signIn(REQUESTER);
      await page.goto(`/pipelines/${name}`);
      const form = page.getByRole("form", { name: "Request a checkpoint reset" });
      const refusal = page.getByTestId("checkpoint-reset").getByTestId("reset-refused");

      // Rewind to earliest keeping the window state: every re-read event is already in its window.
      await form.locator('select[name="kind"]').selectOption("earliest");
      await form.locator('select[name="state"]').selectOption("keep");
      await form.locator('input[name="reason"]').fill("e2e: re-read everything");
      await form.getByRole("button", { name: "Request reset" }).click();
      await expect(refusal).toHaveText(
        /checkpoint reset refused: rewinding a windowed aggregate while keeping its window state double counts: the \d+ re-read event\(s\) are already in their windows/,
      );
      await shot(page, "windowed-reset-refused");

      // Clearing the state but rewinding only part way would rebuild windows from part of their events.
      await form.locator('select[name="kind"]').selectOption("timestamp");
      await form.locator('input[name="at"]').fill(new Date(Date.now() - 10_000).toISOString().slice(0, 19));
      await form.locator('select[name="state"]').selectOption("clear");
      await form.getByRole("button", { name: "Request reset" }).click();
      await expect(refusal, "the second refusal").toContainText(
        /can only be rebuilt from the start of the topic/,
      );

      const requests = await db.query(
        `SELECT count(*)::int AS n FROM change_requests c JOIN pipelines p ON p.id = c.pipeline_id WHERE p.name = $1 AND c.kind = 'checkpoint_reset'`,
        [name],
      );
      // (The workers may raise schema change requests for the demo producer's corrupt values meanwhile.)
      expect(requests.rows[0].n, "a refused reset never becomes a change request").toBe(0);
      const audited = await db.query<{ outcome: string; actor: string }>(
        `SELECT outcome, actor FROM audit_events WHERE action = 'change.request' AND target_label = $1 AND after->>'kind' = 'checkpoint_reset' ORDER BY id`,
        [name],
      );
      expect(audited.rows).toEqual([
        { outcome: "refused", actor: REQUESTER },
        { outcome: "refused", actor: REQUESTER },
      ]);
    } finally {
      await cli("stop", name, "e2e: done").catch(() => undefined);
    }
  });
});
