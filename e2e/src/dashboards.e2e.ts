// The on-call dashboards against the real stack scripts/e2e.sh starts: two worker processes running the
// e2e-ledger pipeline while the demo producer keeps sending to its topic. Every assertion is on numbers:
// what a chart plots (its data-plotted attribute) against what tRPC returned and what batch_log holds,
// the graph's edges against the outcomes, one batch against its batch_log row, and the fleet status
// through a pause (backlog rises, lagging) and a resume (caught up again).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import type { Browser, Page } from "playwright-core";
import { launchBrowser } from "./browser";
import { assertConsoleReachable, baseUrl } from "./console-url";
import { until } from "./until";

const databaseUrl = process.env.SLUICE_E2E_DATABASE_URL;
const pipeline = process.env.SLUICE_E2E_PIPELINE;
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const resultsDir = path.resolve(here, "../test-results");
const skip =
  databaseUrl && pipeline
    ? false
    : "needs the running stack of scripts/e2e.sh (SLUICE_E2E_DATABASE_URL, SLUICE_E2E_PIPELINE)";

interface TPlotted {
  t: number[];
  series: Record<string, (number | null)[]>;
}

let browser: Browser;
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

const plottedOf = async (testId: string, within = page.locator("body")): Promise<TPlotted> =>
  JSON.parse((await within.getByTestId(testId).first().getAttribute("data-plotted")) ?? "null") as TPlotted;

async function sluice(...args: string[]): Promise<void> {
  await promisify(execFile)("node", ["--import", "tsx", "packages/cli/src/main.ts", ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl, SLUICE_ACTOR: "operator@sluice.local" },
  });
}

const screenshot = async (name: string) => {
  mkdirSync(resultsDir, { recursive: true });
  // Full-page shots of the long pipeline page take a while on a loaded 2-core machine.
  await page.screenshot({ path: path.join(resultsDir, name), fullPage: true, timeout: 90_000 });
};

describe("on-call dashboards on the real stack", { skip }, () => {
  before(async () => {
    await assertConsoleReachable();
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    browser = await launchBrowser();
    const context = await browser.newContext({ baseURL: baseUrl, viewport: { width: 1440, height: 900 } });
    context.setDefaultTimeout(20_000);
    page = await context.newPage();
    await page.goto("/sign-in");
    await page.getByLabel("Email").fill("operator@sluice.local");
    await page.getByLabel("Password").fill(process.env.SLUICE_DEMO_PASSWORD ?? "sluice-demo");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL(/\/pipelines$/);
    // The workers have committed batches in at least five 10-second buckets (what the pipeline-page test
    // compares bucket by bucket) and sampled the topic a few times. Run alone (SLUICE_E2E_ONLY), this file
    // starts seconds after the pipeline: five batches alone came in two or three buckets.
    await until("the first batches of the e2e pipeline, in five 10-second buckets", 120_000, async () => {
      const r = await db.query(
        `SELECT count(DISTINCT date_bin('10 seconds', b.committed_at, '2000-01-01'))::int AS n
           FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1`,
        [pipeline],
      );
      return r.rows[0].n >= 6;
    });
  });

  after(async () => {
    await sluice("resume", pipeline!).catch(() => undefined);
    await browser?.close();
    await db?.end();
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
      await table.getByTestId(`fleet-row-${name}`).waitFor();
    const row = table.getByTestId(`fleet-row-${pipeline}`);
    await until("a status for the running pipeline", 60_000, async () =>
      ["caught up", "running"].includes((await row.getAttribute("data-status")) ?? ""),
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
    assert.ok(common.length >= 50, "the same minutes in both");
    for (const t of common)
      assert.equal(
        first.series.processing![first.t.indexOf(t)],
        servedAt.get(t),
        `minute ${new Date(t).toISOString()}`,
      );
    const second = await until("the sparkline to move", 90_000, async () => {
      const now = await plottedOf("sparkline", row);
      return JSON.stringify(now.series) !== JSON.stringify(first.series) ? now : undefined;
    });
    assert.ok(
      second.series.processing!.some((v) => (v ?? 0) > 0),
      "the pipeline processes rows",
    );
    await screenshot("fleet.png");
  });

  test("a pipeline page's charts plot exactly what signals.series returns and what batch_log holds; the graph adds up", async () => {
    // A fixed range aligned to the 10-second buckets, ending at the last full bucket.
    const to = new Date(Math.floor(Date.now() / 10_000) * 10_000);
    const from = new Date(to.getTime() - 5 * 60_000);
    await page.goto(`/pipelines/${pipeline}?from=${from.toISOString()}&to=${to.toISOString()}`);
    await page.getByTestId("chart-rates").waitFor();
    await page.getByTestId("flow-edges").waitFor({ state: "attached" });
    const rates = await plottedOf("chart-rates");
    const series = await trpc<{
      stepSeconds: number;
      points: { t: string; processingRate: number; inputRows: number; backlog: number | null }[];
    }>("signals.series", {
      pipeline,
      range: { from: from.toISOString(), to: to.toISOString() },
    });
    assert.equal(series.stepSeconds, 10);
    assert.deepEqual(
      rates.t,
      series.points.map((p) => Date.parse(p.t)),
    );
    assert.deepEqual(
      rates.series.processing,
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
    assert.ok(byT.size >= 5, "batches committed in the range");
    rates.t.forEach((t, i) =>
      assert.equal(
        rates.series.processing![i],
        Math.round(((byT.get(t) ?? 0) / 10) * 1000) / 1000,
        `bucket ${new Date(t).toISOString()}`,
      ),
    );
    // The backlog chart plots the offset samples.
    const backlog = await plottedOf("chart-backlog");
    assert.deepEqual(
      backlog.series.backlog,
      series.points.map((p) => p.backlog),
    );
    assert.ok(
      backlog.series.backlog!.some((v) => v !== null),
      "offset samples in the range",
    );

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
    assert.equal(Number(await flow.getAttribute("data-input")), input);
    const sink = edges.find((e) => e.to === "sink")!.rows;
    assert.equal(sink + edges.filter((e) => e.leaves).reduce((n, e) => n + e.rows, 0), input);
    assert.equal(await flow.getAttribute("data-balanced"), "true");
    await page.getByTestId("flow-balance").getByText("Balanced").waitFor();
    const outcomes = await db.query(
      `SELECT sum((b.outcomes->>'sink')::int)::int AS sink, sum((b.outcomes->>'duplicate')::int)::int AS duplicate, sum((b.outcomes->>'quarantined')::int)::int AS quarantined
         FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id
        WHERE p.name = $1 AND b.committed_at >= $2 AND b.committed_at < $3`,
      [pipeline, from, to],
    );
    assert.equal(sink, outcomes.rows[0].sink);
    assert.equal(edges.find((e) => e.to === "dedup:duplicate")!.rows, outcomes.rows[0].duplicate);
    assert.equal(edges.find((e) => e.to === "contract:quarantined")!.rows, outcomes.rows[0].quarantined);
    for (const id of [
      "chart-duration",
      "chart-latency",
      "chart-lag",
      "chart-state",
      "chart-violations",
      "chart-outcomes",
    ])
      await page.getByTestId(id).waitFor();
    const latency = await plottedOf("chart-latency");
    assert.ok(
      latency.series.p99!.some((v) => v !== null && v >= 0),
      "end-to-end latency plotted",
    );
    await page.getByTestId("signal-freshness").waitFor();
    await page.getByTestId("offsets").getByTestId("offsets-0").waitFor();
    await screenshot("pipeline-dashboards.png");
  });

  test("drilling into one batch shows its offsets and outcomes, equal to its batch_log row", async () => {
    await page.goto(`/pipelines/${pipeline}`);
    const link = page.getByTestId("batch-history").locator("tbody tr").first().getByRole("link");
    const id = Number(await link.textContent());
    await link.click();
    await page.waitForURL(new RegExp(`/pipelines/${pipeline}/batches/${id}$`));
    const detail = page.getByTestId("batch-detail");
    await detail.waitFor();
    const row = (
      await db.query(
        `SELECT b.input_rows, b.outcomes, b.progress FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1 AND b.batch_id = $2`,
        [pipeline, id],
      )
    ).rows[0];
    assert.equal(
      (await detail.getByTestId("batch-input").textContent())?.replaceAll(",", ""),
      String(row.input_rows),
    );
    await detail
      .getByTestId("batch-outcomes")
      .getByText(`sink ${row.outcomes.sink}`, { exact: false })
      .waitFor();
    for (const s of row.progress.sources as { partition: number; startOffset: number; endOffset: number }[]) {
      const cells = detail.getByTestId(`batch-partition-${s.partition}`).locator("td");
      assert.equal((await cells.nth(1).textContent())?.replaceAll(",", ""), String(s.startOffset));
      assert.equal((await cells.nth(2).textContent())?.replaceAll(",", ""), String(s.endOffset));
    }
    await screenshot("batch-detail.png");
  });

  test("pausing while the producer keeps sending: the backlog chart rises and the fleet says lagging; resuming brings it back", async () => {
    await sluice("pause", pipeline!, "browser test: pause while the producer sends");
    await page.goto("/pipelines");
    const row = page.getByTestId("fleet-table").getByTestId(`fleet-row-${pipeline}`);
    await until(
      "the fleet status lagging",
      150_000,
      async () => (await row.getAttribute("data-status")) === "lagging",
    );
    await row.getByTestId("fleet-reason").getByText("backlog rising", { exact: false }).waitFor();
    await screenshot("fleet-lagging.png");

    await page.goto(`/pipelines/${pipeline}?range=15m`);
    const backlog = await until("a rising backlog on the chart", 30_000, async () => {
      const p = await plottedOf("chart-backlog");
      const values = p.series.backlog!.filter((v): v is number => v !== null).slice(-3);
      return values.length === 3 && values[0]! < values[1]! && values[1]! < values[2]! ? values : undefined;
    });
    assert.ok(backlog[2]! > 0);
    await screenshot("pipeline-paused-backlog.png");

    await sluice("resume", pipeline!);
    await page.goto("/pipelines");
    await until(
      "the fleet status back to caught up (backlog drained)",
      180_000,
      async () => (await row.getAttribute("data-status")) === "caught up",
    );
    await screenshot("fleet-resumed.png");
  });
});
