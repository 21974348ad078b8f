// The change request queue as an operator reads it at 1280×800, against the real stack of
// scripts/e2e.sh, whose adversarial producer sends corrupt values (a declared string arriving as a
// JSON object or a boolean): those are shown once, as a producer fault of the topic with the types as a
// set with counts and the rows quarantined — not as a request anyone could approve. A request that
// cannot succeed has its Approve disabled with the reason beside it and says how to change it; the
// queue is paged. Also the rough edges: a version that does not exist says so, an unknown address
// gets the console's not-found page with a way back, and the console has a favicon.
import { databaseUrl, expect, screenshot, test } from "./fixtures";

const pipeline = process.env.SLUICE_E2E_PIPELINE ?? "e2e-ledger";

test.describe("change requests and rough edges", () => {
  test.skip(!databaseUrl, "needs the running stack of scripts/e2e.sh (SLUICE_E2E_DATABASE_URL)");

  test("corrupt values are one producer fault, not a request; what cannot succeed is disabled with its reason; the queue is paged", async ({
    operator: page,
    db,
  }) => {
    test.setTimeout(300_000);
    await page.setViewportSize({ width: 1280, height: 800 });
    const version = (
      await db.query<{ id: string; pipeline_id: string }>(
        `SELECT v.id, v.pipeline_id FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1 ORDER BY v.version DESC LIMIT 1`,
        [pipeline],
      )
    ).rows[0]!;
    // The workers record the producer's corrupt values (drift the contract's types cannot hold).
    await expect
      .poll(
        async () =>
          (
            await db.query(
              `SELECT 1 FROM change_requests WHERE pipeline_id = $1 AND status = 'pending' AND coalesce(payload->>'needsEdit', '') <> ''`,
              [version.pipeline_id],
            )
          ).rowCount,
        { message: "the workers to record the producer's corrupt values", timeout: 180_000 },
      )
      .toBeGreaterThan(0);
    // A schema change whose new version could not continue the state, and twelve resets to page through.
    const made = await db.query<{ id: string }>(
      `INSERT INTO change_requests (kind, pipeline_id, pipeline_version_id, status, requested_by, reason, payload, impact)
       SELECT 'schema_change', $1, $2, 'pending', 'owner@sluice.local', 'e2e: a window change that cannot continue the state',
              '{"proposed": {}, "observed": null}'::jsonb,
              '{"contract": {"compatibility": "compatible", "changes": []}, "state": {"compatible": false, "problems": [{"reason": "aggregate.window changed from 5m to 10m: window state cannot continue"}]}, "downstream": []}'::jsonb
       UNION ALL
       SELECT 'checkpoint_reset', $1, $2, 'pending', 'owner@sluice.local', 'e2e: reset ' || i, '{"to": {"kind": "earliest"}, "state": "keep"}'::jsonb, NULL
         FROM generate_series(1, 12) i
       RETURNING id::text`,
      [version.pipeline_id, version.id],
    );
    const ids = made.rows.map((r) => r.id);
    try {
      await page.goto("/change-requests");
      const faults = page.getByTestId("producer-faults");
      await expect(faults).toBeVisible();
      const fault = faults.locator("article").first();
      await expect(fault.getByTestId("producer-fault-types")).toHaveText(/^\w+ × \d+(, \w+ × \d+)*$/);
      await expect(fault.getByTestId("producer-fault-seen-by")).toContainText(`${pipeline} v`);
      expect(Number(await fault.getByTestId("producer-fault-rows").textContent())).toBeGreaterThan(0);
      await expect(page.getByText(/later also/)).toHaveCount(0);
      // Not in the queue: no card says it has nothing to approve.
      await expect(
        page
          .getByTestId("change-requests")
          .locator("article[data-testid^='change-request-']")
          .getByTestId("needs-edit"),
      ).toHaveCount(0);
      await screenshot(page, "change-queue-producer-faults.png", { fullPage: false });

      // Page 1: the newest ten; the window change is on page 2, whose Approve cannot succeed.
      const pager = page.getByTestId("change-pager");
      await expect(pager).toContainText("Page 1");
      await expect(page.locator("article[data-testid^='change-request-']")).toHaveCount(10);
      await pager.getByRole("button", { name: "Older" }).click();
      await expect(pager).toContainText("Page 2");
      const card = page.getByTestId(`change-request-${ids[0]}`);
      await expect(card).toBeVisible();
      const approve = card.getByRole("button", { name: "Approve and apply" });
      await expect(approve).toBeDisabled();
      const reason = card.getByTestId("cannot-approve");
      await expect(reason).toBeVisible();
      await expect(reason).toHaveText(/cannot continue the state/);
      await expect(approve).toHaveAttribute("aria-describedby", `cannot-approve-${ids[0]}`);
      await expect(
        card.getByTestId("how-to-change").getByRole("link", { name: /Edit page/ }),
      ).toHaveAttribute("href", `/pipelines/${pipeline}/edit`);
      await card.scrollIntoViewIfNeeded();
      await screenshot(page, "change-queue-disabled-reason.png", { fullPage: false });
      await pager.getByRole("button", { name: "Newer" }).click();
      await expect(pager).toContainText("Page 1");
    } finally {
      await db.query(`UPDATE change_requests SET status = 'cancelled' WHERE id = ANY($1::bigint[])`, [ids]);
    }
  });

  test("rough edges: ?v=99 says it does not exist, an unknown address has a way back, a favicon", async ({
    viewer: page,
  }) => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`/pipelines/${pipeline}?v=99`);
    await expect(page.getByRole("heading", { name: "Version 99 does not exist" })).toBeVisible();
    await expect(page.getByRole("link", { name: "Show the serving version" })).toBeVisible();
    await screenshot(page, "rough-version-99.png", { fullPage: false });

    const answer = await page.goto("/no/such/page");
    expect(answer?.status()).toBe(404);
    await expect(page.getByRole("heading", { level: 1, name: "Page not found" })).toBeVisible();
    await expect(page.getByRole("navigation", { name: "Console" })).toBeVisible();
    await page.getByRole("link", { name: "fleet" }).click();
    await expect(page).toHaveURL(/\/pipelines$/);

    const icon = await page.locator("link[rel~='icon']").first().getAttribute("href");
    expect(icon).toBeTruthy();
    expect((await page.request.get(icon!)).status()).toBe(200);
  });
});
