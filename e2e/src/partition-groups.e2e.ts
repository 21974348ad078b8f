// Partition groups in the console (issue 22): a ledger with `source.kafka.parallelism: 3` on the stack's
// 3-partition topic, run as three `sluice run --group g` processes — the workers do not schedule groups
// yet. The pipeline page's batch history marks each batch with its group, as batch_log records it, and
// starting the version on the workers is refused with how to run it.
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

  test("each batch in the history names its group; the workers refuse the version, saying how to run it", async ({
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

    const page = await signedIn(browser, "operator@sluice.local", { width: 1440, height: 900 });
    await page.goto(`/pipelines/${NAME}`);
    // What the version is and how it runs: not on the workers, by one process per group.
    await expect(page.getByTestId("partition-groups")).toContainText("read in 3 partition groups");
    await expect(page.getByText("Run by its partition groups, not by the workers")).toBeVisible();
    const history = page.getByTestId("batch-history");
    for (const r of committed.rows)
      await expect(history.getByTestId(`batch-${r.batch_id}`)).toContainText(`group ${r.group!.no} of 3`);
    await history.scrollIntoViewIfNeeded();
    await screenshot(page, "partition-groups-history.png");

    // The workers run one runner a version: starting it there is refused, with the way to run it.
    await expect(sluiceAsAdmin("start", NAME, "try the workers")).rejects.toThrow(
      /reads its partitions in 3 groups .*sluice run <spec> --group <g>/,
    );
    const run = await db.query<{ status: string }>(
      `SELECT r.status::text AS status FROM pipeline_runs r JOIN pipeline_versions v ON v.id = r.pipeline_version_id
         JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1`,
      [NAME],
    );
    expect(run.rows.filter((r) => r.status === "running")).toEqual([]);
  });
});
