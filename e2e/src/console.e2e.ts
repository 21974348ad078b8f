// The console end to end in a real browser against a running console and the seeded demo data:
// sign-in (wrong and right password), the fleet page with data served by tRPC from Postgres, retrying
// failed webhook deliveries, a pipeline's page, the navigation, sign-out, and the public health endpoint.
// One page goes through them in order (signed out, refused, signed in, …, signed out): serial.
import type { BrowserContext, Page } from "@playwright/test";
import { baseUrl } from "./console-url";
import { databaseUrl, expect, screenshot, test } from "./fixtures";

const OPERATOR = { email: "operator@sluice.local", name: "Oona Operator", role: "operator" };
const DEMO_PASSWORD = process.env.SLUICE_DEMO_PASSWORD ?? "sluice-demo";
/** The auth library's session cookie (prefix "sluice"; "__Secure-" is added over https). */
const SESSION_COOKIE = "sluice.session_token";
const needsDatabase = "needs SLUICE_E2E_DATABASE_URL, the console's database (scripts/e2e.sh sets it)";

let context: BrowserContext;
let page: Page;

async function signIn(email: string, password: string): Promise<void> {
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

test.describe("Sluice console", () => {
  test.describe.configure({ mode: "serial" });

  test.beforeAll(async ({ browser }) => {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
  });

  test.afterAll(async () => {
    await context?.close();
  });

  test("GET /api/health answers JSON with a reachability check per service and no secrets", async () => {
    const res = await fetch(`${baseUrl}/api/health`);
    expect([200, 503], `unexpected status ${res.status}`).toContain(res.status);
    expect(res.headers.get("content-type") ?? "").toMatch(/application\/json/);
    const body = (await res.json()) as {
      status: string;
      checks: Record<string, { ok: boolean; latencyMs: number }>;
    };
    expect(res.status === 200).toBe(body.status === "ok");
    expect(Object.keys(body.checks).sort()).toEqual(["kafka", "postgres", "redis"]);
    for (const check of Object.values(body.checks)) {
      expect(typeof check.ok).toBe("boolean");
      expect(typeof check.latencyMs).toBe("number");
    }
    expect(JSON.stringify(body), "health output must not contain URL credentials").not.toMatch(
      /:\/\/[^/\s]*@/,
    );
  });

  test("a signed-out visitor is sent to sign-in, keeping where they were going", async () => {
    await page.goto("/alerts");
    await page.waitForURL(/\/sign-in\?next=%2Falerts$/);
    await expect(page.getByRole("button", { name: "Sign in", exact: true })).toBeVisible();
  });

  test("a wrong password shows an error and does not sign in", async () => {
    await page.goto("/sign-in");
    await signIn(OPERATOR.email, "not-the-password");
    // (Next.js' route announcer is also role=alert, so look for ours by its text.)
    await expect(page.getByRole("alert").filter({ hasText: "Wrong email or password." })).toBeVisible();
    expect(page.url()).toMatch(/\/sign-in/);
    const cookies = await context.cookies();
    expect(
      cookies.map((c) => c.name),
      "no session cookie after a failed sign-in",
    ).not.toContain(SESSION_COOKIE);
  });

  test("the operator signs in and sees the Pipelines page with teams served through tRPC", async () => {
    await page.goto("/sign-in");
    const teamList = page.waitForResponse(
      (r) => r.url().includes("/api/trpc/") && r.url().includes("team.list"),
    );
    await signIn(OPERATOR.email, DEMO_PASSWORD);
    await page.waitForURL(/\/pipelines$/);
    expect((await teamList).status()).toBe(200);

    await expect(page.getByRole("heading", { level: 1, name: "Pipelines" })).toBeVisible();
    const teams = page.getByTestId("teams-table");
    await expect(teams.getByText("Payments Data")).toBeVisible();
    await expect(teams.getByText("Risk & Fraud")).toBeVisible();

    // Either the seeded pipelines or the empty state that says how to register one.
    const fleet = page.getByTestId("fleet-table").or(page.getByRole("heading", { name: "No pipelines yet" }));
    await expect(fleet.first()).toBeVisible();

    const user = page.getByTestId("signed-in-user");
    await expect(user.getByText(OPERATOR.name)).toBeVisible();
    await expect(user.getByText(OPERATOR.role, { exact: true })).toBeVisible();
    await expect(page.getByTestId("service-status").getByText("Postgres")).toBeVisible();

    const session = (await context.cookies()).find((c) => c.name === SESSION_COOKIE);
    expect(session, "session cookie set").toBeDefined();
    expect(session!.httpOnly).toBe(true);
    expect(session!.sameSite).toBe("Lax");

    await screenshot(page, "pipelines.png");
  });

  test.describe("with the console's database", () => {
    test.skip(!databaseUrl, needsDatabase);

    test("the operator retries failed webhook deliveries from the Pipelines page: one key, then all; each re-queue is recorded", async ({
      db,
    }) => {
      // Two deliveries of the demo's fraud-alerts pipeline as the engine leaves them after a receiver outage.
      const tag = `e2e-${Date.now()}`;
      const keys = [`fraud-alerts:${tag}-1`, `fraud-alerts:${tag}-2`] as const;
      const status = async (key: string) =>
        (await db.query(`SELECT status, attempts FROM webhook_deliveries WHERE idempotency_key = $1`, [key]))
          .rows[0];
      try {
        await db.query(
          `INSERT INTO webhook_deliveries (pipeline_id, idempotency_key, status, attempts, last_status_code, last_error, payload, pipeline_version_id, batch_id, last_attempt_at)
           SELECT v.pipeline_id, k, 'failed', 8, 500, 'HTTP 500: receiver says no (attempt 8 of 8)', jsonb_build_object('event_id', k), v.id, 0, now()
             FROM (SELECT v.* FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = 'fraud-alerts' ORDER BY v.version DESC LIMIT 1) v,
                  unnest($1::text[]) AS k`,
          [keys],
        );
        await page.goto("/pipelines");
        const section = page.getByTestId("webhook-fraud-alerts");
        const firstRow = section.getByRole("row").filter({ hasText: keys[0] });
        await expect(firstRow.getByText("HTTP 500: receiver says no")).toBeVisible();
        await expect(section.getByRole("row").filter({ hasText: keys[1] })).toBeVisible();
        await screenshot(page, "webhook-deliveries.png");

        await section.getByLabel(/Reason/).fill("receiver fixed (e2e)");
        // Each click waits for its own answer: the status line of the one before is still on the page.
        const requeued = () =>
          page.waitForResponse((r) => r.url().includes("/api/trpc/") && r.url().includes("webhook.requeue"));
        await Promise.all([requeued(), firstRow.getByRole("button", { name: "Retry" }).click()]);
        await expect(
          section.getByRole("status").filter({ hasText: "Re-queued 1 delivery with its idempotency key" }),
        ).toBeVisible();
        await expect(firstRow).toHaveCount(0);
        expect(await status(keys[0])).toEqual({ status: "pending", attempts: 0 });
        expect(await status(keys[1])).toEqual({ status: "failed", attempts: 8 });

        await Promise.all([requeued(), section.getByRole("button", { name: "Retry all 1 failed" }).click()]);
        await expect(section.getByTestId("count-failed").filter({ hasText: "0" })).toBeVisible();
        expect(await status(keys[1])).toEqual({ status: "pending", attempts: 0 });
        await expect(section.getByTestId("count-pending").filter({ hasText: "2" })).toBeVisible();

        const audit = await db.query(
          `SELECT idempotency_key, deliveries, actor, reason FROM webhook_requeues WHERE reason = 'receiver fixed (e2e)' ORDER BY id`,
        );
        expect(audit.rows).toEqual([
          {
            idempotency_key: keys[0],
            deliveries: 1,
            actor: `user:${OPERATOR.email}`,
            reason: "receiver fixed (e2e)",
          },
          {
            idempotency_key: null,
            deliveries: 1,
            actor: `user:${OPERATOR.email}`,
            reason: "receiver fixed (e2e)",
          },
        ]);
      } finally {
        await db.query(`DELETE FROM webhook_deliveries WHERE idempotency_key = ANY($1)`, [keys]);
        await db.query(`DELETE FROM webhook_requeues WHERE reason = 'receiver fixed (e2e)'`);
      }
    });

    test("a pipeline's page shows its latest batch with an idle partition, the recent batches and its dead letters by reason", async ({
      db,
    }) => {
      // No workers run against the console's database: these are the only batches of the demo's
      // payments-ledger, as the engine records them (batch_log.progress, dead_letters).
      const version = (
        await db.query(
          `SELECT v.id FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = 'payments-ledger' ORDER BY v.version DESC LIMIT 1`,
        )
      ).rows[0].id as string;
      const progress = (batchId: number, at: string) => ({
        batchId,
        pipelineVersionId: version,
        timestamp: at,
        inputRows: 120,
        inputRowsPerSecond: 60,
        processedRowsPerSecond: 480,
        durationMs: { plan: 1, read: 120, process: 90, commit: 39, total: 250 },
        sources: [0, 1, 2].map((partition) => ({
          partition,
          startOffset: batchId * 40,
          endOffset: partition === 1 ? batchId * 40 : batchId * 40 + 60,
          latestOffset: batchId * 40 + 500,
        })),
        backlog: 880,
        skippedOffsets: {},
        watermark: "2025-01-01T00:00:00.000Z",
        eventTimeMax: "2025-01-01T06:00:00.000Z",
        stateRows: 4200,
        stateBytes: 210_000,
        outcomes: {
          sink: 110,
          duplicate: 6,
          filtered: 0,
          quarantined: 1,
          deadLetter: 1,
          late: 2,
          stale: 0,
          dropped: {},
        },
        expectations: {},
        replayed: false,
        preparedAhead: true,
        partitionEventTime: [
          { partition: 0, eventTimeMax: "2025-01-01T06:00:00.000Z", lastDataAt: at, idle: false },
          {
            partition: 1,
            eventTimeMax: "2025-01-01T03:10:00.000Z",
            lastDataAt: "2025-01-01T05:00:00.000Z",
            idle: true,
          },
          { partition: 2, eventTimeMax: "2025-01-01T05:58:00.000Z", lastDataAt: at, idle: false },
        ],
      });
      try {
        for (const [batchId, at] of [
          [41, "2025-01-01T06:00:01.000Z"],
          [42, "2025-01-01T06:00:02.000Z"],
        ] as const) {
          const p = progress(batchId, at);
          await db.query(
            `INSERT INTO batch_log (pipeline_version_id, batch_id, input_rows, sink_rows, outcomes, progress) VALUES ($1, $2, $3, $4, $5, $6)`,
            [version, batchId, p.inputRows, p.outcomes.sink, JSON.stringify(p.outcomes), JSON.stringify(p)],
          );
        }
        await db.query(
          `INSERT INTO dead_letters (pipeline_version_id, batch_id, outcome, reason, topic, partition, "offset", raw, ingest_time)
           SELECT $1, 42, outcome, reason, 'payments', 0, 9000 + n, convert_to('e2e', 'UTF8'), now() FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS u(outcome, reason, n)`,
          [
            version,
            ["late", "late", "late", "dead_letter"],
            [
              "event time 2025-01-01T00:01:00.000Z is behind the watermark 2025-01-01T06:00:00.000Z",
              "event time 2025-01-01T00:02:00.000Z is behind the watermark 2025-01-01T06:00:00.000Z",
              "event time 2025-01-01T00:03:00.000Z is behind the watermark 2025-01-01T06:00:00.000Z",
              "empty payload (tombstone or null value)",
            ],
          ],
        );

        await page.goto("/pipelines");
        await page.getByTestId("fleet-table").getByRole("link", { name: "payments-ledger" }).click();
        await page.waitForURL(/\/pipelines\/payments-ledger$/);
        await expect(page.getByRole("heading", { level: 1, name: "payments-ledger" })).toBeVisible();

        // Never started on the workers: the page says how.
        await expect(page.getByRole("heading", { name: "Not started on the workers" })).toBeVisible();
        await expect(page.getByText('npx sluice start payments-ledger "first deploy"')).toBeVisible();

        const latest = page.getByTestId("latest-batch");
        await expect(latest.getByTestId("latest-batch-id").filter({ hasText: "Batch 42" })).toBeVisible();
        await expect(latest.getByTestId("latest-outcomes").getByText("sink 110")).toBeVisible();
        await expect(latest.getByTestId("partition-1").getByText("idle", { exact: true })).toBeVisible();
        await expect(latest.getByTestId("partition-0").getByText("active", { exact: true })).toBeVisible();
        await expect(latest.getByText("no longer holds the watermark back", { exact: false })).toBeVisible();

        const history = page.getByTestId("batch-history");
        await expect(history.getByTestId("batch-42").getByText("read ahead")).toBeVisible();
        await expect(history.getByTestId("batch-41")).toBeVisible();

        const deadLetters = page.getByTestId("dead-letters");
        await expect(
          deadLetters.getByTestId("dead-letter-counts").filter({ hasText: "late 3" }),
        ).toBeVisible();
        const lateGroup = deadLetters
          .getByTestId("dead-letter-reasons")
          .getByRole("row")
          .filter({ hasText: "event time <time> is behind the watermark <time>" });
        await expect(lateGroup.getByRole("cell").nth(2)).toHaveText("3");
        // Browse: inspect one row's bytes (this test wrote "e2e" as each row's raw value); filter to the late rows.
        const browser = deadLetters.getByTestId("dead-letter-browser");
        const tombstone = browser
          .getByTestId("dead-letter-page")
          .getByRole("row")
          .filter({ hasText: "empty payload (tombstone or null value)" });
        await tombstone.getByRole("button", { name: /^Inspect/ }).click();
        const inspector = browser.getByTestId("dead-letter-inspector");
        await expect(inspector.getByText("Raw bytes — 3 byte(s), valid UTF-8")).toBeVisible();
        expect((await inspector.getByTestId("inspector-hex").textContent()) ?? "").toMatch(
          /^00000000  65 32 65 +e2e$/,
        );
        expect(await inspector.getByTestId("inspector-reason").textContent()).toBe(
          "empty payload (tombstone or null value)",
        );
        const filters = browser.getByRole("form", { name: "Filter dead letters" });
        await filters.locator('select[name="outcome"]').selectOption("late");
        await filters.getByRole("button", { name: "Filter" }).click();
        await expect(browser.getByTestId("dead-letter-page").locator("tbody tr td:nth-child(5)")).toHaveText([
          "late",
          "late",
          "late",
        ]);
        await expect(browser.getByTestId("dead-letter-matching")).toHaveText(/^3 row\(s\) match/);

        await screenshot(page, "pipeline-detail.png");

        await page.goto("/pipelines/no-such-pipeline");
        await expect(page.getByRole("heading", { name: "Pipeline not found" })).toBeVisible();
      } finally {
        await db.query(`DELETE FROM batch_log WHERE pipeline_version_id = $1 AND batch_id IN (41, 42)`, [
          version,
        ]);
        await db.query(`DELETE FROM dead_letters WHERE pipeline_version_id = $1 AND batch_id = 42`, [
          version,
        ]);
      }
    });
  });

  test("the navigation reaches Alerts, Change requests and Audit, each showing what it holds, and back", async () => {
    const nav = page.getByRole("navigation", { name: "Console" });
    const go = async (link: string, url: RegExp) => {
      await nav.getByRole("link", { name: link }).click();
      await page.waitForURL(url);
      await expect(page.getByRole("heading", { level: 1, name: link })).toBeVisible();
      await expect(nav.getByRole("link", { name: link })).toHaveAttribute("aria-current", "page");
    };
    // Alerts has real content once anything fired (alerts.e2e.ts makes sure something did).
    await go("Alerts", /\/alerts$/);
    await expect(page.getByTestId("alerts")).toBeVisible();
    // The queue: change-management.e2e.ts leaves its requests; alone, the empty state says how to ask.
    await go("Change requests", /\/change-requests$/);
    const queue = page.getByTestId("change-requests");
    await expect(queue.locator('article, h2:text-is("No change requests")').first()).toBeVisible();
    // The audit log holds this test's own sign-ins: the wrong password (refused) and the right one.
    await go("Audit", /\/audit$/);
    const mine = page
      .getByTestId("audit-table")
      .locator('tr[data-action="auth.sign_in"]')
      .filter({ hasText: OPERATOR.email });
    await expect(mine.filter({ hasText: "refused" }).first()).toBeVisible();
    await expect(mine.filter({ hasNotText: "refused" }).first()).toBeVisible();

    await nav.getByRole("link", { name: "Pipelines" }).click();
    await page.waitForURL(/\/pipelines$/);
    await expect(page.getByTestId("teams-table").getByText("Payments Data")).toBeVisible();
  });

  test("tRPC refuses procedures without a session", async () => {
    const res = await fetch(`${baseUrl}/api/trpc/pipeline.list`);
    expect(res.status).toBe(401);
  });

  test("signing out ends the session", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/sign-in$/);
    await page.goto("/pipelines");
    await page.waitForURL(/\/sign-in\?next=%2Fpipelines$/);
  });
});
