// The pages of the pipelines that combine data (issue #23) on the real stack of scripts/e2e.sh: the
// demo's payments-enriched (an event-time join with the customer change feed) and settlement-views
// (two outputs, fraud 20 m and finance 2 d of lateness), each started from the CLI as a new version
// reading the stack's payment topic — payments-enriched also a change feed of its own, sent by the
// demo's change-feed producer started here. The workers run a few batches, the pipelines are paused
// so that the page and the database hold still, and every assertion is on numbers: what the page
// shows against what batch_log, join_held and tRPC hold. Screenshots of both pages are kept.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { Page } from "@playwright/test";
import type pg from "pg";
import {
  databaseUrl,
  expect,
  plottedIn,
  screenshot as screenshotOf,
  signedIn,
  test,
  repoRoot,
  sluiceAsAdmin,
} from "./fixtures";

const topic = process.env.SLUICE_E2E_TOPIC;
const ENRICHED = "payments-enriched";
const VIEWS = "settlement-views";
/** How the console writes a count (lib/format.ts formatCount): 12,345. */
const count = (n: number) => new Intl.NumberFormat("en-GB", { maximumFractionDigits: 2 }).format(n);

let page: Page;
let db: pg.Client;
let feed: ChildProcess | undefined;
const versions = new Map<string, number>();

const sluice = sluiceAsAdmin;

/** A tRPC query from the signed-in page (its session cookie), unwrapped from superjson. */
async function trpc<T>(procedure: string, input: unknown): Promise<T> {
  const query = `?input=${encodeURIComponent(JSON.stringify({ json: input }))}`;
  const body = await page.evaluate(
    async (url) => (await fetch(url)).json(),
    `/api/trpc/${procedure}${query}`,
  );
  return (body as { result: { data: { json: T } } }).result.data.json;
}

/** The newest version of a pipeline: its id and number. */
async function newestVersion(name: string): Promise<{ id: string; version: number }> {
  const r = await db.query<{ id: string; version: number }>(
    `SELECT v.id, v.version FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1 ORDER BY v.version DESC LIMIT 1`,
    [name],
  );
  return r.rows[0]!;
}

interface TBatchRow {
  batch_id: string;
  progress: {
    outcomes: { sink: number; late: number };
    join?: Record<string, number | string | null>;
    outputs?: {
      name: string;
      outcomes: { rows: number; sink: number; late: number };
      stateRows: number;
      stateBytes: number;
    }[];
  };
}

async function batchesOf(versionId: string): Promise<TBatchRow[]> {
  return (
    await db.query<TBatchRow>(
      `SELECT batch_id, progress FROM batch_log WHERE pipeline_version_id = $1 ORDER BY batch_id DESC`,
      [versionId],
    )
  ).rows;
}

/** Paused, and no batch commits any more: the newest batch id stays the same for 10 s. */
async function pauseAndSettle(name: string): Promise<void> {
  const { id: versionId, version } = await newestVersion(name);
  await sluice("pause", `${name}@${version}`, "e2e: hold still for the page");
  let last = -1;
  await expect
    .poll(
      async () => {
        const r = await db.query<{ n: string | null }>(
          `SELECT max(batch_id)::text AS n FROM batch_log WHERE pipeline_version_id = $1`,
          [versionId],
        );
        const now = Number(r.rows[0]!.n);
        const settled = now === last;
        last = now;
        return settled;
      },
      { message: `${name} stops committing once paused`, intervals: [10_000], timeout: 120_000 },
    )
    .toBe(true);
}

test.describe("the pages of pipelines that combine data", () => {
  test.skip(
    !databaseUrl || !topic,
    "needs the running stack of scripts/e2e.sh (SLUICE_E2E_DATABASE_URL, SLUICE_E2E_TOPIC)",
  );
  test.describe.configure({ mode: "serial" });

  test.beforeAll(async ({ browser, db: client }) => {
    test.setTimeout(8 * 60_000);
    db = client;
    const changes = `${topic}-customer-changes`;
    // The demo's change feed (changed_at = now), on a topic of its own, faster than the demo's 5/s so
    // that its watermark moves within the test; it creates the topic.
    feed = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "packages/producer/src/customer-changes-cli.ts",
        "--topic",
        changes,
        "--rate",
        "20",
        "--seed",
        `${Date.now()}`,
      ],
      { cwd: repoRoot, env: process.env, stdio: "ignore" },
    );
    await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "scripts/wait-for-topic.ts", changes, "60"],
      { cwd: repoRoot, env: process.env },
    );
    const dir = mkdtempSync(path.join(tmpdir(), "sluice-e2e-combine-"));
    for (const name of [ENRICHED, VIEWS]) {
      const spec = readFileSync(path.join(repoRoot, `demo/pipelines/${name}.yaml`), "utf8")
        .replace("topic: payments,", `topic: ${topic},`)
        .replace("topic: customer-changes,", `topic: ${changes},`);
      expect(spec).toContain(`topic: ${topic},`);
      const file = path.join(dir, `${name}.yaml`);
      writeFileSync(file, spec);
      // New topics: the checkpoint and the join's offsets cannot continue version 1's (never started).
      await sluice("start", file, "e2e: the pages of pipelines that combine data", "--fresh-state");
    }
    // A few batches each with rows, then hold still.
    for (const name of [ENRICHED, VIEWS]) {
      const v = await newestVersion(name);
      versions.set(name, v.version);
      await expect
        .poll(
          async () =>
            (
              await db.query(
                `SELECT count(*)::int AS n FROM batch_log WHERE pipeline_version_id = $1 AND input_rows > 0`,
                [v.id],
              )
            ).rows[0].n,
          { message: `${name}'s first batches with rows`, timeout: 180_000 },
        )
        .toBeGreaterThanOrEqual(4);
    }
    await Promise.all([ENRICHED, VIEWS].map(pauseAndSettle));
    page = await signedIn(browser, "operator@sluice.local", { width: 1440, height: 1000, timeoutMs: 60_000 });
  });

  test.afterAll(async () => {
    feed?.kill("SIGTERM");
    for (const [name, version] of versions)
      await sluice("stop", `${name}@${version}`, "e2e: done with the combine pages").catch(() => undefined);
    await page?.context().close();
  });

  test("payments-enriched: the rows waiting for the dimension and the graph's sums are the database's", async () => {
    const v = await newestVersion(ENRICHED);
    const batches = await batchesOf(v.id);
    const newest = batches[0]!;
    const join = newest.progress.join!;
    const held = Number(
      (await db.query(`SELECT count(*)::int AS n FROM join_held WHERE pipeline_version_id = $1`, [v.id]))
        .rows[0].n,
    );
    // The workload reached the case this page is for: rows wait for the dimension (its watermark is
    // 10 minutes behind a feed sent now).
    expect(held).toBeGreaterThan(0);
    expect(join.waiting).toBe(held);

    await page.goto(`/pipelines/${ENRICHED}?v=${v.version}&range=1h`);
    const latest = page.getByTestId("latest-batch");
    await expect(latest.getByTestId("latest-batch-id")).toContainText(newest.batch_id);
    // The join panel: waiting rows as the console writes counts (12,345), joined, missing.
    await expect(latest.getByTestId("join-waiting")).toContainText(`${count(held)} rows`);
    await expect(latest.getByTestId("join-joined")).toContainText(count(Number(join.joined)));
    await expect(latest.getByTestId("join-missing")).toContainText(count(Number(join.missing)));
    // Behind a join the admitted rows go to the join, not yet to the table; how many of them started
    // waiting, and how many earlier rows were released, are the record's.
    const outcomes = latest.getByTestId("latest-outcomes");
    await expect(outcomes).toContainText(`to the join ${count(newest.progress.outcomes.sink)}`);
    await expect(outcomes).not.toContainText(/(^|\s)sink \d/);
    await expect(latest.getByTestId("latest-join-handoff")).toContainText(
      `Of the ${count(newest.progress.outcomes.sink)} rows handed to the join, ${count(Number(join.held))} started waiting for the dimension; ${count(Number(join.released))} rows waiting from earlier batches were released.`,
    );
    // Recent batches: each batch's Waiting is its record's.
    const history = page.getByTestId("batch-history");
    for (const b of batches.slice(0, 5))
      await expect(history.getByTestId(`batch-${b.batch_id}`).getByTestId("batch-join-waiting")).toHaveText(
        count(Number(b.progress.join!.waiting)),
      );

    // The graph over the hour (every batch of this version): the waiting node says what is held now,
    // formatted; the edge to it is the rows that started waiting less those released (all of them
    // still waiting: the version started in this test); the sink edge is what the join wrote, not the
    // batches' sink outcome; and input = sink + every branch + waiting.
    const sum = (f: (b: TBatchRow) => number) => batches.reduce((n, b) => n + f(b), 0);
    const written = sum(
      (b) =>
        Number(b.progress.join!.joined) +
        Number(b.progress.join!.joinedAtBound) +
        Number(b.progress.join!.missing),
    );
    const flow = page.getByTestId("flow");
    await expect(flow).toHaveAttribute("data-balanced", "true");
    await expect(flow.getByText(`waiting for dimension · ${count(held)} rows now`)).toBeVisible();
    const edges = await flow
      .getByTestId("flow-edges")
      .locator("tbody tr")
      .evaluateAll((rows) =>
        rows.map((r) => ({
          to: r.getAttribute("data-to")!,
          rows: Number(r.getAttribute("data-rows")),
          leaves: r.getAttribute("data-leaves") === "true",
        })),
      );
    const edge = (to: string) => edges.find((e) => e.to === to)!.rows;
    expect(edge("join:waiting")).toBe(held);
    expect(edge("sink")).toBe(written);
    expect(edge("join:dead-letter")).toBe(sum((b) => Number(b.progress.join!.deadLettered)));
    expect(sum((b) => b.progress.outcomes.sink)).toBe(written + held + 0); // onMissing: emit
    const input = Number(await flow.getAttribute("data-input"));
    const branches = edges.filter((e) => e.leaves).reduce((n, e) => n + e.rows, 0);
    expect(edge("sink") + branches + edge("join:waiting")).toBe(input);
    const to = new Date();
    const signals = await trpc<{ flow: { input: number; waiting: number } }>("signals.signals", {
      pipeline: ENRICHED,
      version: v.version,
      range: { from: new Date(to.getTime() - 3_600_000).toISOString(), to: to.toISOString() },
    });
    expect(signals.flow).toMatchObject({ input, waiting: held });
    // The graph itself writes those counts: the sink edge's, formatted, is drawn (not left hidden).
    await expect(
      flow.locator(".flow-edge-label", { hasText: new RegExp(`^${count(written)}$`) }).first(),
    ).toBeVisible();
    await screenshotOf(page, "combine-payments-enriched.png");
  });

  test("settlement-views: each output's written rows, own late count and state are the records'", async () => {
    const v = await newestVersion(VIEWS);
    const batches = await batchesOf(v.id);
    const newest = batches[0]!;
    await page.goto(`/pipelines/${VIEWS}?v=${v.version}&range=1h`);
    const latest = page.getByTestId("latest-batch");
    await expect(latest.getByTestId("latest-batch-id")).toContainText(newest.batch_id);
    for (const o of newest.progress.outputs!) {
      const row = latest.getByTestId(`output-${o.name}`);
      await expect(row.getByTestId("output-late")).toHaveText(count(o.outcomes.late));
      await expect(row).toContainText(`${count(o.stateRows)} rows`);
    }
    // Recent batches: a column per output, written · late · state, batch by batch.
    const history = page.getByTestId("batch-history");
    for (const b of batches.slice(0, 5))
      for (const o of b.progress.outputs!) {
        const cell = history.getByTestId(`batch-${b.batch_id}`).getByTestId(`batch-output-${o.name}`);
        await expect(cell).toHaveText(
          `${count(o.outcomes.sink)} · ${count(o.outcomes.late)} late · ${count(o.stateRows)} rows`,
        );
      }
    // The same numbers through tRPC (what the page renders from).
    const progress = await trpc<{
      batches: { batchId: number; outputs: { name: string; late: number; stateRows: number }[] }[];
    }>("pipeline.batches", { pipeline: VIEWS, version: v.version });
    const served = progress.batches.find((b) => b.batchId === Number(newest.batch_id))!;
    expect(served.outputs.map((o) => [o.name, o.late, o.stateRows])).toEqual(
      newest.progress.outputs!.map((o) => [o.name, o.outcomes.late, o.stateRows]),
    );
    await screenshotOf(page, "combine-settlement-views.png");
  });

  test("settlement-views: the charts plot a series per output, each bucket the output rollups' and all of them batch_log's", async () => {
    const v = await newestVersion(VIEWS);
    await page.goto(`/pipelines/${VIEWS}?v=${v.version}&range=1h`);
    const written = await plottedIn(page, "chart-output-written");
    const late = await plottedIn(page, "chart-output-late");
    const state = await plottedIn(page, "chart-output-state");
    expect(Object.keys(written.series).sort()).toEqual(["finance", "fraud"]);
    // A 1-hour range is 10-second buckets: the rollup's 10-second rows, output by output.
    const rollup = await db.query<{
      output: string;
      t: number;
      sink: number;
      late: number;
      state_rows: number;
    }>(
      `SELECT output, (extract(epoch FROM bucket_start) * 1000)::float8 AS t, sink::float8 AS sink, late::float8 AS late,
              state_rows::float8 AS state_rows
         FROM output_rollup WHERE pipeline_version_id = $1 AND grain_seconds = 10`,
      [v.id],
    );
    expect(rollup.rows.length, "output buckets folded").toBeGreaterThan(0);
    for (const output of ["fraud", "finance"]) {
      const at = new Map(rollup.rows.filter((r) => r.output === output).map((r) => [r.t, r]));
      expect(written.series[output], `${output} written`).toEqual(written.t.map((t) => at.get(t)?.sink ?? 0));
      expect(late.series[output], `${output} late`).toEqual(late.t.map((t) => at.get(t)?.late ?? 0));
      expect(state.series[output], `${output} state rows`).toEqual(
        state.t.map((t) => at.get(t)?.state_rows ?? null),
      );
      // And summed over the range, what the output's progress records say it wrote and found late.
      const records = (await batchesOf(v.id)).flatMap((b) =>
        b.progress.outputs!.filter((o) => o.name === output),
      );
      const sum = (xs: (number | null)[]) => xs.reduce<number>((n, x) => n + (x ?? 0), 0);
      expect(sum(written.series[output]!)).toBe(records.reduce((n, o) => n + o.outcomes.sink, 0));
      expect(sum(late.series[output]!)).toBe(records.reduce((n, o) => n + o.outcomes.late, 0));
    }
    await page.getByTestId("chart-output-written").scrollIntoViewIfNeeded();
    await screenshotOf(page, "combine-settlement-views-outputs.png", { fullPage: false });
  });
});
