// Authoring a pipeline in the browser against the real stack of scripts/e2e.sh (the demo producer
// sending adversarial payment events — duplicates, late, malformed — to SLUICE_E2E_TOPIC, two workers
// running the fleet). An owner opens the template, types a spec with a type error in an expectation
// and sees it underlined at its line, fixes it, dry-runs it on the real topic (malformed rows as dead
// letters, duplicates flagged, nothing written), registers it, starts it, sees its first batches on its
// page, edits it into version 2 and sees the diff in the history. Then bad input: YAML that does not
// parse, another team's owner, a huge paste, a sample over the limit — each with a clear message and
// nothing registered. One owner's page goes through the tests in order: serial.
import type { Page } from "@playwright/test";
import type pg from "pg";
import { databaseUrl, expect, screenshot, signedIn, test } from "./fixtures";

const topic = process.env.SLUICE_E2E_TOPIC;
const run = Date.now().toString(36);
const name = `authored-${run}`;

let page: Page;
let db: pg.Client;

/** The spec as an owner of Payments Data would write it, with `expr` as its first expectation. */
function specText(opts: { name?: string; owner?: string; expr?: string; description?: string } = {}): string {
  return `name: ${opts.name ?? name}
owner: ${opts.owner ?? "payments-data"}
${opts.description ? `description: ${opts.description}\n` : ""}source:
  kafka:
    topic: ${topic}
    startingOffsets: earliest
    maxOffsetsPerTrigger: 2000
format: json
contract:
  fields:
    event_id: string
    type: string
    merchant_id: string
    seq: int
    payment_id: string
    customer_id: string
    amount: decimal
    currency: string
    card_country: string
    event_time: timestamp
  onUnknownField: rescue
  onTypeMismatch: quarantine
eventTime:
  column: event_time
  watermarkDelay: 6h
dedupe:
  key: [event_id]
  within: watermark
expectations:
  - name: positive_amount
    expr: "${opts.expr ?? "amount > 0"}"
    action: warn
lateData: deadLetter
sink:
  postgres:
    table: ${(opts.name ?? name).replace(/-/g, "_")}
trigger:
  every: 2s
`;
}

/** Replace the editor's whole text, as a paste would. */
async function setEditor(text: string): Promise<void> {
  const content = page.locator(".cm-content");
  await content.click();
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(text);
}

const shot = (file: string, fullPage = true) => screenshot(page, file, { fullPage });
const registered = async (pipeline: string) =>
  Number((await db.query(`SELECT count(*) AS n FROM pipelines WHERE name = $1`, [pipeline])).rows[0].n);

test.describe("Authoring a pipeline in the browser", () => {
  test.skip(
    !databaseUrl || !topic,
    "needs the running stack of scripts/e2e.sh (SLUICE_E2E_DATABASE_URL, SLUICE_E2E_TOPIC)",
  );
  test.describe.configure({ mode: "serial" });

  test.beforeAll(async ({ browser, db: client }) => {
    db = client;
    page = await signedIn(browser, "owner@sluice.local");
  });
  test.afterAll(async () => {
    await page?.context().close();
  });

  test("an owner writes a pipeline from the template, fixes an inline error, dry-runs, registers and starts it, then makes version 2", async () => {
    await page.getByRole("link", { name: "New pipeline" }).click();
    await page.waitForURL(/\/pipelines\/new$/);
    await expect(page.getByTestId("draft-origin").filter({ hasText: "the ledger template" })).toBeVisible();
    await expect(page.getByTestId("draft-valid")).toBeVisible(); // the template itself is valid

    // A type error in an expectation: a decimal compared with a string.
    const broken = specText({ expr: "amount > 'zero'" });
    const line = broken.split("\n").findIndex((l) => l.includes("amount > 'zero'")) + 1;
    await setEditor(broken);
    const error = page.getByTestId("draft-errors").locator("li").first();
    await expect(error.filter({ hasText: `line ${line}, column` })).toBeVisible();
    await expect(error).toContainText(/expectations\[0\]\.expr/);
    // Underlined in the editor, on that line.
    const underlined = page.locator(".cm-lintRange-error").first();
    await expect(underlined).toBeVisible();
    const lineOfMark = await underlined.evaluate((el) => {
      const lineEl = el.closest(".cm-line");
      return lineEl ? [...lineEl.parentElement!.children].indexOf(lineEl) + 1 : -1;
    });
    expect(lineOfMark, "the error is underlined on the expectation's line").toBe(line);
    await shot("authoring-inline-error.png");

    // Fixed: the dry run and registering open.
    await setEditor(specText());
    await expect(
      page.getByTestId("draft-valid").filter({ hasText: `Registers a new pipeline, ${name}` }),
    ).toBeVisible();

    // A sample over the limit is refused with the limit; nothing is read.
    const dryRun = page.getByTestId("dry-run");
    await dryRun.getByLabel("Records per partition").fill("5000");
    await dryRun.getByRole("button", { name: "Dry run" }).click();
    await expect(
      page.getByTestId("dry-run-error").filter({ hasText: "at most 1,000 records per partition" }),
    ).toBeVisible();

    // The real topic's last 300 records per partition: malformed rows are dead letters, duplicates flagged.
    await dryRun.getByLabel("Records per partition").fill("300");
    await dryRun.getByRole("button", { name: "Dry run" }).click();
    await expect(page.getByTestId("dry-run-nothing-written")).toBeVisible({ timeout: 40_000 });
    const rows = page.getByTestId("dry-run-rows").locator("tbody tr");
    const total = await rows.count();
    expect(total, "the sample has rows").toBeGreaterThan(0);
    const deadLetters = await page
      .getByTestId("dry-run-rows")
      .locator('tr[data-outcome="dead_letter"]')
      .count();
    const duplicates = await page.getByTestId("dry-run-rows").locator('tr[data-outcome="duplicate"]').count();
    expect(deadLetters, "malformed rows are shown as dead letters").toBeGreaterThan(0);
    expect(duplicates, "duplicates within the sample are flagged").toBeGreaterThan(0);
    const totals = page.getByTestId("dry-run-totals");
    const totalOf = async (label: string) =>
      Number(
        await totals
          .locator("tr", { has: page.getByRole("rowheader", { name: label, exact: true }) })
          .locator("td")
          .textContent(),
      );
    expect(await totalOf("dead letter"), "the dead-letter total matches the rows").toBe(deadLetters);
    expect(await totalOf("duplicate"), "the duplicate total matches the rows").toBe(duplicates);
    expect(await registered(name), "a dry run registers nothing").toBe(0);
    await shot("authoring-dry-run.png");

    // Register and start.
    const register = page.getByTestId("register");
    await register.getByLabel("Why").fill("first authored in the browser");
    await register.getByRole("button", { name: "Register" }).click();
    await expect(page.getByTestId("registered").filter({ hasText: `${name} version 1` })).toBeVisible();
    await register.getByRole("button", { name: "Start version 1" }).click();
    await expect(page.getByTestId("started")).toBeVisible();
    await register.getByRole("link", { name: "Open its page" }).click();
    // The link names the version it registered (every page acts on the version it shows).
    await page.waitForURL(new RegExp(`/pipelines/${name}\\?v=1$`));
    await expect(page.getByTestId("batch-history").locator('[data-testid^="batch-"]').first()).toBeVisible({
      timeout: 60_000,
    });
    const committed = Number(
      (
        await db.query(
          `SELECT count(*) AS n FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1`,
          [name],
        )
      ).rows[0].n,
    );
    expect(committed, "its first batches are committed").toBeGreaterThan(0);
    await shot("authoring-first-batches.png");

    // Version 2: a description, from the version history's "New version".
    await page.getByTestId("version-history").getByRole("link", { name: "New version" }).click();
    await page.waitForURL(new RegExp(`/pipelines/${name}/edit$`));
    await expect(page.getByTestId("draft-origin").filter({ hasText: `version 1 of ${name}` })).toBeVisible();
    await expect(
      page.getByTestId("draft-valid").filter({ hasText: "The same spec as version 1" }),
    ).toBeVisible();
    await setEditor(specText({ description: "Payments ledger written in the console" }));
    await expect(
      page
        .getByTestId("draft-valid")
        .filter({ hasText: "Registers version 2, continuing version 1's checkpoint and state" }),
    ).toBeVisible();
    await page.getByTestId("register").getByLabel("Why").fill("describe it");
    await page.getByTestId("register").getByRole("button", { name: "Register" }).click();
    await expect(
      page
        .getByTestId("registered")
        .filter({ hasText: "version 2, continuing version 1's checkpoint and state" }),
    ).toBeVisible();

    await page.goto(`/pipelines/${name}`);
    const history = page.getByTestId("history-table");
    await expect(history.locator("tbody tr").nth(1)).toBeVisible();
    const historyRows = await history.locator("tbody tr").allInnerTexts();
    expect(historyRows[0]!).toMatch(
      /2[\s\S]*user:owner@sluice\.local[\s\S]*describe it[\s\S]*continued version 1's checkpoint and state/,
    );
    expect(historyRows[1]!).toMatch(/1[\s\S]*user:owner@sluice\.local[\s\S]*first authored in the browser/);
    const diff = page.getByTestId("diff-table");
    await expect(diff.locator("tbody tr").filter({ hasText: "description" })).toBeVisible();
    await expect(diff).toContainText("Payments ledger written in the console");
    await expect(
      page.getByTestId("diff-state").filter({ hasText: "Version 2 can continue version 1's state" }),
    ).toBeVisible();
    await page.getByTestId("version-history").scrollIntoViewIfNeeded();
    await shot("authoring-version-diff.png");
  });

  test("the editor shows a field's docs on hover and completes field names and, in expressions, the contract's fields", async () => {
    await page.goto("/pipelines/new");
    await expect(page.getByTestId("draft-valid")).toBeVisible();
    await page
      .locator(".cm-line span", { hasText: /^watermarkDelay$/ })
      .first()
      .hover();
    await expect(
      page
        .locator(".cm-tooltip-hover .spec-doc")
        .filter({ hasText: "eventTime.watermarkDelay: watermark = max(event time seen)" }),
    ).toBeVisible();

    // A key under source.kafka: that section's fields.
    const options = page.locator(".cm-tooltip-autocomplete .cm-completionLabel");
    await page.locator(".cm-line", { hasText: "maxOffsetsPerTrigger" }).click();
    await page.keyboard.press("End");
    await page.keyboard.press("Enter");
    await page.keyboard.type("parti");
    await expect(options.filter({ hasText: "partitions" })).toBeVisible();
    await page.keyboard.press("Escape");

    // In an expression: the contract's fields, with their types (the editor renders the lines in view:
    // go to the end, where the expectations are).
    await page.keyboard.press("Control+End");
    await page.locator(".cm-line", { hasText: 'expr: "amount > 0"' }).click();
    await page.keyboard.press("End");
    await page.keyboard.press("ArrowLeft");
    await page.keyboard.type(" && curr");
    await expect(options.filter({ hasText: "currency" })).toBeVisible();
    await shot("authoring-completions.png", false);
    await page.keyboard.press("Escape");
  });

  test("bad input is answered with a clear message and nothing is registered", async () => {
    await page.goto("/pipelines/new");
    await expect(page.getByTestId("draft-valid")).toBeVisible();

    await setEditor("name: [unclosed\nowner: payments-data\n");
    await expect(page.getByTestId("draft-errors").filter({ hasText: "YAML syntax error" })).toBeVisible();
    await expect(page.getByText("The dry run and registering open once the spec is valid.")).toBeVisible();

    const foreign = `other-team-${run}`;
    await setEditor(specText({ name: foreign, owner: "risk" }));
    await expect(
      page
        .getByTestId("draft-not-allowed")
        .filter({ hasText: "it belongs to Risk & Fraud; your teams: Payments Data" }),
    ).toBeVisible();
    await page.getByTestId("register").getByLabel("Why").fill("not ours");
    await page.getByTestId("register").getByRole("button", { name: "Register" }).click();
    await expect(
      page
        .getByTestId("register-error")
        .filter({ hasText: `only for your own teams' pipelines: "${foreign}" — it belongs to Risk & Fraud` }),
    ).toBeVisible();
    await page.getByTestId("dry-run").getByRole("button", { name: "Dry run" }).click();
    await expect(
      page.getByTestId("dry-run-error").filter({ hasText: "only for your own teams' pipelines" }),
    ).toBeVisible();
    await shot("authoring-other-team.png");

    await setEditor(`${specText({ name: `huge-${run}` })}\n# ${"x".repeat(110_000)}\n`);
    await expect(page.getByTestId("draft-status").filter({ hasText: "longer than 100,000" })).toBeVisible();
    // (The viewport only: a full-page capture of a 110,000-character line is wider than Chromium captures.)
    await page.getByTestId("draft-status").scrollIntoViewIfNeeded();
    await shot("authoring-huge-paste.png", false);

    expect(await registered(foreign), "another team's pipeline was not registered").toBe(0);
    expect(await registered(`huge-${run}`), "the huge paste was not registered").toBe(0);
  });
});
