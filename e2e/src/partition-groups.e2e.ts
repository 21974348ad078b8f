// Partition groups in the console (issue 22): a ledger with `source.kafka.parallelism: 3` on the stack's
// 3-partition topic. First one batch per group by three `sluice run --group g --once` processes, then
// started on the workers, which run the three groups' batch chains at once. The pipeline page's batch
// history marks each batch with its group as batch_log records it, the run panel shows each group's
// turn, and a pause settles all groups together.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { databaseUrl, expect, repoRoot, screenshot, signedIn, sluiceAsAdmin, test } from "./fixtures";

const topic = process.env.SLUICE_E2E_TOPIC;
const NAME = "e2e-groups";

/** The ledger demo spec on the stack's topic, in three partition groups, writing a table of its own. */
function groupedSpec(): string {
  const spec = readFileSync(path.join(repoRoot, "demo/pipelines/payments-ledger.yaml"), "utf8")
    .replace(/^name: payments-ledger/m, `name: ${NAME}`)
    .replace("topic: payments,", `topic: ${topic}, parallelism: 3,`)
    .replace("table: payments_ledger", "table: e2e_groups");
  const file = path.join(mkdtempSync(path.join(tmpdir(), "sluice-e2e-")), "e2e-groups.yaml");
  writeFileSync(file, spec);
  return file;
}

test.describe("partition groups", () => {
  test.skip(!databaseUrl || !topic, "needs the running stack of scripts/e2e.sh");

  test("the workers run the groups at once; each batch in the history names its group; a pause settles them all", async ({
    browser,
    db,
  }) => {
    test.setTimeout(4 * 60_000);
    const file = groupedSpec();
    // One batch per group, one process each (on any machines, against the same database and Kafka).
    for (const g of [0, 1, 2]) await sluiceAsAdmin("run", file, "--once", "--group", String(g));

    const committed = await db.query<{
      batch_id: string;
      group: { no: number; of: number } | null;
      partitions: number[];
    }>(
      `SELECT b.batch_id, b.progress->'group' AS group,
              (SELECT array_agg((s->>'partition')::int) FROM jsonb_array_elements(b.progress->'sources') s) AS partitions
         FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id
        WHERE p.name = $1 ORDER BY b.batch_id`,
      [NAME],
    );
    // Striped ids: group g's first batch is g; each read only its own partition (p mod 3 = g).
    expect(committed.rows.map((r) => [Number(r.batch_id), r.group, r.partitions])).toEqual([
      [0, { no: 0, of: 3 }, [0]],
      [1, { no: 1, of: 3 }, [1]],
      [2, { no: 2, of: 3 }, [2]],
    ]);

    // On the workers: each group's chain continues from that group's checkpoint, concurrently.
    await sluiceAsAdmin("start", NAME, "run the groups on the workers");
    const perGroup = async () =>
      (
        await db.query<{ no: number; batches: number }>(
          `SELECT (b.progress->'group'->>'no')::int AS no, count(*)::int AS batches
             FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id
            WHERE p.name = $1 GROUP BY 1 ORDER BY 1`,
          [NAME],
        )
      ).rows;
    await expect.poll(perGroup, { timeout: 90_000 }).toEqual([
      { no: 0, batches: expect.any(Number) },
      { no: 1, batches: expect.any(Number) },
      { no: 2, batches: expect.any(Number) },
    ]);
    await expect
      .poll(async () => (await perGroup()).every((g) => g.batches >= 3), { timeout: 90_000 })
      .toBe(true);

    const page = await signedIn(browser, "operator@sluice.local", { width: 1440, height: 900 });
    await page.goto(`/pipelines/${NAME}`);
    await expect(page.getByTestId("partition-groups")).toContainText("read in 3 partition groups");
    await expect(page.getByTestId("run-phase")).toHaveText("running");
    const turns = page.getByTestId("group-turns");
    for (const g of [0, 1, 2]) await expect(turns.getByTestId(`group-turn-${g}`)).toContainText(`${g} of 3`);
    // The history's newest batches (the workers commit several a second: read which ones it shows),
    // each badge as batch_log has it.
    const history = page.getByTestId("batch-history");
    await expect(history.getByTestId(/^batch-\d+$/).first()).toBeVisible();
    const shown = (
      await history
        .getByTestId(/^batch-\d+$/)
        .evaluateAll((rows) => rows.map((r) => Number(r.getAttribute("data-testid")!.slice("batch-".length))))
    ).slice(0, 3);
    const groupOf = await db.query<{ batch_id: string; no: number }>(
      `SELECT b.batch_id, (b.progress->'group'->>'no')::int AS no
         FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id
        WHERE p.name = $1 AND b.batch_id = ANY($2::bigint[])`,
      [NAME, shown],
    );
    expect(groupOf.rows).toHaveLength(3);
    for (const r of groupOf.rows)
      await expect(history.getByTestId(`batch-${r.batch_id}`)).toContainText(`group ${r.no} of 3`);
    await turns.scrollIntoViewIfNeeded();
    await screenshot(page, "partition-groups-running.png");

    // `sluice status` says the same: each group's turn, and each batch's group.
    const status = (await sluiceAsAdmin("status", NAME)).stdout;
    for (const g of [0, 1, 2]) expect(status).toContain(`partition group ${g} of 3: `);
    expect(status).toMatch(/batch \d+ \(group [0-2] of 3, backlog of its partitions\)/);
    expect(status).toContain("partition groups' leases g0 ");

    // A pause acts on every group: it settles once none has a batch in flight, and nothing commits after.
    await sluiceAsAdmin("pause", NAME, "e2e: pause all groups");
    await expect
      .poll(
        async () =>
          (
            await db.query<{ phase: string }>(
              `SELECT r.status::text AS phase FROM pipeline_runs r JOIN pipeline_versions v ON v.id = r.pipeline_version_id
                 JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1`,
              [NAME],
            )
          ).rows[0]?.phase,
        { timeout: 60_000 },
      )
      .toBe("paused");
    await page.reload();
    await expect(page.getByTestId("run-phase")).toHaveText("paused");
    for (const g of [0, 1, 2])
      await expect(page.getByTestId(`group-turn-${g}`)).not.toContainText("batch in flight");
    await screenshot(page, "partition-groups-paused.png");
    await sluiceAsAdmin("stop", NAME, "e2e: done");
  });
});
