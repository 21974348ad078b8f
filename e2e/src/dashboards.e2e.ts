// The on-call dashboards against the real stack scripts/e2e.sh starts: two worker processes running the
// e2e-ledger pipeline while the demo producer keeps sending to its topic. Every assertion is on numbers:
// what a chart plots (its data-plotted attribute) against what tRPC returned and what batch_log holds,
// the graph's edges against the outcomes, one batch against its batch_log row, and the fleet status
// through a pause (backlog rises, lagging) and a resume (caught up again). One operator's page goes
// through the tests in order, the pause last: serial.
import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Locator, Page } from "@playwright/test";
import type pg from "pg";
import { databaseUrl, expect, plottedIn, screenshot as screenshotOf, signedIn, test } from "./fixtures";

const pipeline = process.env.SLUICE_E2E_PIPELINE;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

let page: Page;
let db: pg.Client;

/** A tRPC query from the signed-in page (its session cookie), unwrapped from superjson. */
async function trpc<T>(procedure: string, input?: unknown): Promise<T> {
  const query = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify({ json: input }))}`;
  const body = await page.evaluate(
    async (url) => (await fetch(url)).json(),
    `/api/trpc/${procedure}${query}`,
  );
  return (body as { result: { data: { json: T } } }).result.data.json;
}

const plottedOf = (testId: string, within: Page | Locator = page) => plottedIn(within, testId);

async function sluice(...args: string[]): Promise<void> {
  await promisify(execFile)("node", ["--import", "tsx", "packages/cli/src/main.ts", ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl, SLUICE_ACTOR: "operator@sluice.local" },
  });
}

const screenshot = (name: string) => screenshotOf(page, name);

test.describe("on-call dashboards on the real stack", () => {
  test.skip(
    !databaseUrl || !pipeline,
    "needs the running stack of scripts/e2e.sh (SLUICE_E2E_DATABASE_URL, SLUICE_E2E_PIPELINE)",
  );
  test.describe.configure({ mode: "serial" });

  test.beforeAll(async ({ browser, db: client }) => {
    // The wait below for the pipeline's first batches can take two minutes.
    test.setTimeout(4 * 60_000);
    db = client;
    page = await signedIn(browser, "operator@sluice.local", { width: 1440, height: 900 });
    // The workers have committed batches in at least five 10-second buckets (what the pipeline-page test
    // compares bucket by bucket) and sampled the topic a few times. Run alone (SLUICE_E2E_ONLY), this file
    // starts seconds after the pipeline: five batches alone came in two or three buckets.
    await expect
      .poll(
        async () =>
          (
            await db.query(
              `SELECT count(DISTINCT date_bin('10 seconds', b.committed_at, '2000-01-01'))::int AS n
                 FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1`,
              [pipeline],
            )
          ).rows[0].n,
        { message: "the first batches of the e2e pipeline, in five 10-second buckets", timeout: 120_000 },
      )
      .toBeGreaterThanOrEqual(6);
  });

  test.afterAll(async () => {
    await sluice("resume", pipeline!).catch(() => undefined);
    await page?.context().close();
  });

  test("the fleet lists the pipelines, and the running one's sparkline values change between two reads and equal fleet.list's", async () => {
    await page.goto("/pipelines");
    const table = page.getByTestId("fleet-table");
    for (const name of [
      "payments-ledger",
      "merchant-settlements",
      "customer-status",
      "fraud-alerts",
      pipeline!,
    ])
      await expect(table.getByTestId(`fleet-row-${name}`)).toBeVisible();
    const row = table.getByTestId(`fleet-row-${pipeline}`);
    await expect(row, "a status for the running pipeline").toHaveAttribute(
      "data-status",
      /^(caught up|running)$/,
      { timeout: 60_000 },
    );
    const first = await plottedOf("sparkline", row);
    const fleet =
      await trpc<{ name: string; sparkline: { t: string[]; processing: number[] } }[]>("fleet.list");
    const served = fleet.find((r) => r.name === pipeline)!;
    // The sparkline plots what the procedure returns, minute by minute (the page may be one refresh
    // behind, so the newest two minutes are left out of the comparison).
    const servedAt = new Map(
      served.sparkline.t.map((t, i) => [
        Date.parse(t),
        Math.round(served.sparkline.processing[i]! * 1000) / 1000,
      ]),
    );
    const common = first.t.slice(0, -2).filter((t) => servedAt.has(t));
    expect(common.length, "the same minutes in both").toBeGreaterThanOrEqual(50);
    for (const t of common)
      expect(first.series.processing![first.t.indexOf(t)], `minute ${new Date(t).toISOString()}`).toBe(
        servedAt.get(t),
      );
    let second = first;
    await expect
      .poll(
        async () => {
          second = await plottedOf("sparkline", row);
          return JSON.stringify(second.series);
        },
        { message: "the sparkline to move", timeout: 90_000 },
      )
      .not.toBe(JSON.stringify(first.series));
    expect(
      second.series.processing!.some((v) => (v ?? 0) > 0),
      "the pipeline processes rows",
    ).toBe(true);
    await screenshot("fleet.png");
  });

  test("a pipeline page's charts plot exactly what signals.series returns and what batch_log holds; the graph adds up", async () => {
    // A fixed range aligned to the 10-second buckets, ending at the last full bucket.
    const to = new Date(Math.floor(Date.now() / 10_000) * 10_000);
    const from = new Date(to.getTime() - 5 * 60_000);
    await page.goto(`/pipelines/${pipeline}?from=${from.toISOString()}&to=${to.toISOString()}`);
    await expect(page.getByTestId("chart-rates")).toBeVisible();
    await expect(page.getByTestId("flow-edges")).toBeAttached();
    const rates = await plottedOf("chart-rates");
    const series = await trpc<{
      stepSeconds: number;
      points: { t: string; processingRate: number; inputRows: number; backlog: number | null }[];
    }>("signals.series", {
      pipeline,
      range: { from: from.toISOString(), to: to.toISOString() },
    });
    expect(series.stepSeconds).toBe(10);
    expect(rates.t).toEqual(series.points.map((p) => Date.parse(p.t)));
    expect(rates.series.processing).toEqual(
      series.points.map((p) => Math.round(p.processingRate * 1000) / 1000),
    );
    // batch_log, bucket by bucket: rows committed ÷ 10 s.
    const direct = await db.query(
      `SELECT (extract(epoch FROM date_bin('10 seconds', b.committed_at, '2000-01-01')) * 1000)::float8 AS t, sum(b.input_rows)::int AS n
         FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id
        WHERE p.name = $1 AND b.committed_at >= $2 AND b.committed_at < $3 GROUP BY 1`,
      [pipeline, from, to],
    );
    const byT = new Map(direct.rows.map((r) => [Number(r.t), r.n as number]));
    expect(byT.size, "batches committed in the range").toBeGreaterThanOrEqual(5);
    rates.t.forEach((t, i) =>
      expect(rates.series.processing![i], `bucket ${new Date(t).toISOString()}`).toBe(
        Math.round(((byT.get(t) ?? 0) / 10) * 1000) / 1000,
      ),
    );
    // The backlog chart plots the offset samples.
    const backlog = await plottedOf("chart-backlog");
    expect(backlog.series.backlog).toEqual(series.points.map((p) => p.backlog));
    expect(
      backlog.series.backlog!.some((v) => v !== null),
      "offset samples in the range",
    ).toBe(true);

    // The graph: sink + every branch = input, and input = batch_log's input rows in the range.
    const edges = await page
      .getByTestId("flow-edges")
      .locator("tbody tr")
      .evaluateAll((rows) =>
        rows.map((r) => ({
          to: r.getAttribute("data-to")!,
          rows: Number(r.getAttribute("data-rows")),
          leaves: r.getAttribute("data-leaves") === "true",
        })),
      );
    const input = [...byT.values()].reduce((a, b) => a + b, 0);
    const flow = page.getByTestId("flow");
    expect(Number(await flow.getAttribute("data-input"))).toBe(input);
    const sink = edges.find((e) => e.to === "sink")!.rows;
    expect(sink + edges.filter((e) => e.leaves).reduce((n, e) => n + e.rows, 0)).toBe(input);
    expect(await flow.getAttribute("data-balanced")).toBe("true");
    await expect(page.getByTestId("flow-balance").getByText("Balanced")).toBeVisible();
    const outcomes = await db.query(
      `SELECT sum((b.outcomes->>'sink')::int)::int AS sink, sum((b.outcomes->>'duplicate')::int)::int AS duplicate, sum((b.outcomes->>'quarantined')::int)::int AS quarantined
         FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id
        WHERE p.name = $1 AND b.committed_at >= $2 AND b.committed_at < $3`,
      [pipeline, from, to],
    );
    expect(sink).toBe(outcomes.rows[0].sink);
    expect(edges.find((e) => e.to === "dedup:duplicate")!.rows).toBe(outcomes.rows[0].duplicate);
    expect(edges.find((e) => e.to === "contract:quarantined")!.rows).toBe(outcomes.rows[0].quarantined);
    for (const id of [
      "chart-duration",
      "chart-latency",
      "chart-lag",
      "chart-state",
      "chart-violations",
      "chart-outcomes",
    ])
      await expect(page.getByTestId(id)).toBeVisible();
    // This ledger's table is keyed by its dedupe key, so it keeps no dedup state: the state chart says
    // the batches held none — not that nothing ran, as it did before it told the two apart.
    const state = await db.query(
      `SELECT count(*)::int AS batches, coalesce(max((b.progress->>'stateRows')::bigint), 0)::int AS most
         FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id
        WHERE p.name = $1 AND b.committed_at >= $2 AND b.committed_at < $3`,
      [pipeline, from, to],
    );
    expect(state.rows[0].batches).toBeGreaterThan(0);
    expect(state.rows[0].most).toBe(0);
    await expect(page.getByTestId("chart-state").getByTestId("chart-empty")).toHaveText(
      "No state held: every batch in this range left 0 state rows.",
    );
    const latency = await plottedOf("chart-latency");
    expect(
      latency.series.p99!.some((v) => v !== null && v >= 0),
      "end-to-end latency plotted",
    ).toBe(true);
    await expect(page.getByTestId("signal-freshness")).toBeVisible();
    await expect(page.getByTestId("offsets").getByTestId("offsets-0")).toBeVisible();
    await screenshot("pipeline-dashboards.png");
  });

  test("drilling into one batch shows its offsets and outcomes, equal to its batch_log row", async () => {
    await page.goto(`/pipelines/${pipeline}`);
    const link = page.getByTestId("batch-history").locator("tbody tr").first().getByRole("link");
    const id = Number(await link.textContent());
    await link.click();
    await page.waitForURL(new RegExp(`/pipelines/${pipeline}/batches/${id}$`));
    const detail = page.getByTestId("batch-detail");
    await expect(detail).toBeVisible();
    const row = (
      await db.query(
        `SELECT b.input_rows, b.outcomes, b.progress FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1 AND b.batch_id = $2`,
        [pipeline, id],
      )
    ).rows[0];
    expect((await detail.getByTestId("batch-input").textContent())?.replaceAll(",", "")).toBe(
      String(row.input_rows),
    );
    await expect(
      detail.getByTestId("batch-outcomes").getByText(`sink ${row.outcomes.sink}`, { exact: false }),
    ).toBeVisible();
    for (const s of row.progress.sources as { partition: number; startOffset: number; endOffset: number }[]) {
      const cells = detail.getByTestId(`batch-partition-${s.partition}`).locator("td");
      expect((await cells.nth(1).textContent())?.replaceAll(",", "")).toBe(String(s.startOffset));
      expect((await cells.nth(2).textContent())?.replaceAll(",", "")).toBe(String(s.endOffset));
    }
    await screenshot("batch-detail.png");
  });

  test("pausing while the producer keeps sending: the backlog chart rises and the fleet says lagging; resuming brings it back", async () => {
    await sluice("pause", pipeline!, "browser test: pause while the producer sends");
    await page.goto("/pipelines");
    const row = page.getByTestId("fleet-table").getByTestId(`fleet-row-${pipeline}`);
    await expect(row, "the fleet status lagging").toHaveAttribute("data-status", "lagging", {
      timeout: 150_000,
    });
    await expect(row.getByTestId("fleet-reason").getByText("backlog rising", { exact: false })).toBeVisible();
    await screenshot("fleet-lagging.png");

    await page.goto(`/pipelines/${pipeline}?range=15m`);
    let backlog: number[] = [];
    await expect
      .poll(
        async () => {
          const p = await plottedOf("chart-backlog");
          backlog = p.series.backlog!.filter((v): v is number => v !== null).slice(-3);
          return backlog.length === 3 && backlog[0]! < backlog[1]! && backlog[1]! < backlog[2]!;
        },
        { message: "a rising backlog on the chart", timeout: 30_000 },
      )
      .toBe(true);
    expect(backlog[2]!).toBeGreaterThan(0);
    await screenshot("pipeline-paused-backlog.png");

    await sluice("resume", pipeline!);
    await page.goto("/pipelines");
    await expect(row, "the fleet status back to caught up (backlog drained)").toHaveAttribute(
      "data-status",
      "caught up",
      { timeout: 180_000 },
    );
    await screenshot("fleet-resumed.png");
  });
});
