// What the pipeline page shows of a join and of several outputs, from real progress records (issue
// #23). First the demo's
// payments-enriched pipeline (demo/pipelines/payments-enriched.yaml as shipped, its topics pointed at
// this test's) over the demo producers — payments and the customer change feed over the same 500
// customers — run by the engine's PipelineRunner on real Kafka and Postgres. The view the console
// renders (combine-progress-view.ts through findBatchProgress / batchProgressView, the graph through
// getPipelineSignals) must say what the engine did: the join's counts over the batches add up to the
// rows in the sink table, the rows emitted without a customer are the rows with no status, the rows
// waiting for the dimension and the dimension's watermark are what join_held and the checkpoint hold;
// the graph's sink edge is the rows in the table (not the rows still waiting) and its edges add up.
//
// Timeline (simulated): the change feed runs 15 minutes from T0 at the demo's 5 changes/s, the payments
// 30 minutes from T0. So the dimension's watermark (10 m delay) stops near T0+5m: payments before it are
// joined, those more than waitFor (15 m) behind the payments' time are joined at the bound, the newest
// wait; payments before their customer's first insert (the 2% sent up to 3 h late among them) are
// emitted without it, counted missing. The source is read 2,500 offsets a batch, so rows wait in one
// batch and are released in a later one. Idle timeouts are raised to 6 h in the test's copy so that how
// fast this machine runs the batches (processing time) cannot change the event-time decisions.
//
// Then the demo's settlement-views (demo/pipelines/settlement-views.yaml) over the same payments: each
// output's own late count (the fraud view's 20 minutes refuse payments the finance output's two days
// take) and the rows each output's view says reached it are the rows counted in its table.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { findCheckpoint } from "@sluice/engine";
import { createEngineFixture, drainPipeline, type EngineFixture } from "@sluice/engine/testing";
import { isPipelineDimension, parseSpecOrThrow, type TPipelineSpec } from "@sluice/pipeline-spec";
import { DEMO_CHANGE_FEED, produceCustomerChanges, producePayments, simulatedClock } from "@sluice/producer";
import { uniqueName } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prismaSqlClient } from "../change-requests/prisma-sql-client";
import { getPipelineSignals } from "../signals/get-pipeline-signals";
import { BATCH_LOG_ROW_SELECT, batchProgressView } from "./batch-progress-view";
import { findBatchProgress } from "./find-batch-progress";

const DEMO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../demo/pipelines");

let fx: EngineFixture;
let db: PrismaClient;
let changesTopic: string;

beforeAll(async () => {
  fx = await createEngineFixture("combine_page");
  db = createPrismaClient(fx.db.url);
  changesTopic = uniqueName("combine_page_changes");
  await produceCustomerChanges({
    kafka: fx.kafka,
    topic: changesTopic,
    partitions: 3,
    keyBy: "customer",
    seed: 23,
    changes: 15 * 60 * DEMO_CHANGE_FEED.ratePerSecond,
    customers: DEMO_CHANGE_FEED.customers,
    shuffleShare: DEMO_CHANGE_FEED.shuffleShare,
    duplicateShare: DEMO_CHANGE_FEED.duplicateShare,
    clock: simulatedClock({ stepMs: 1000 / DEMO_CHANGE_FEED.ratePerSecond }),
  });
  await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: 18_000,
    partitions: 3,
    seed: 23,
    customers: DEMO_CHANGE_FEED.customers, // as scripts/up.sh runs the demo producer
    duplicateShare: 0.05,
    lateShare: 0.02,
    outOfOrderShare: 0.05,
    clock: simulatedClock({ stepMs: 100 }), // 10 payments/s: 30 minutes
    log: () => undefined,
  });
}, 120_000);
afterAll(async () => {
  await db?.$disconnect();
  const admin = fx?.kafka.admin();
  if (admin) {
    await admin.connect();
    await admin.deleteTopics({ topics: [changesTopic] }).catch(() => undefined);
    await admin.disconnect();
  }
  await fx?.close();
});

async function count(sql: string, values: unknown[] = []): Promise<number> {
  return Number((await fx.pool.query<{ n: string }>(sql, values)).rows[0]!.n);
}

/** The demo's payments-enriched as shipped, its topics pointed at this test's. */
async function enrichedSpec(): Promise<TPipelineSpec> {
  const shipped = parseSpecOrThrow(await readFile(path.join(DEMO, "payments-enriched.yaml"), "utf8"));
  const join = shipped.join!;
  if (isPipelineDimension(join.dimension)) throw new Error("payments-enriched joins its changelog topic");
  return {
    ...shipped,
    // Several batches (the shipped 20,000 would read the whole topic at once), so rows wait and are released.
    source: { kafka: { ...shipped.source.kafka, topic: fx.topic, maxOffsetsPerTrigger: 2500 } },
    eventTime: { ...shipped.eventTime!, idleTimeout: "6h" },
    join: {
      ...join,
      dimension: {
        ...join.dimension,
        kafka: { ...join.dimension.kafka, topic: changesTopic },
        eventTime: { ...join.dimension.eventTime, idleTimeout: "6h" },
      },
    },
  };
}

describe("the pipeline page of a join", () => {
  it(
    "shows the join's counts, waiting rows and dimension watermark as the engine left them",
    { timeout: 300_000 },
    async () => {
      const spec = await enrichedSpec();
      expect(spec.join).toMatchObject({ waitFor: "15m", onMissing: "emit" });
      const { pipelineVersionId, progress } = await drainPipeline(fx, spec);
      expect(progress.length).toBeGreaterThan(5);

      // Every batch's record as the page reads it.
      const rows = await db.batchLog.findMany({
        where: { pipelineVersionId },
        orderBy: { batchId: "asc" },
        select: BATCH_LOG_ROW_SELECT,
      });
      const views = rows.map(batchProgressView);
      const sum = (f: (v: (typeof views)[number]) => number) => views.reduce((n, v) => n + f(v), 0);
      const joined = sum((v) => v.join!.joined);
      const atBound = sum((v) => v.join!.joinedAtBound);
      const missing = sum((v) => v.join!.missing);
      expect(sum((v) => v.join!.deadLettered)).toBe(0); // onMissing: emit

      // The workload reached every case: the two feeds share customers.
      expect(joined).toBeGreaterThan(1000);
      expect(sum((v) => v.join!.released)).toBeGreaterThan(100); // waited, then joined in a later batch
      expect(atBound).toBeGreaterThan(100);
      expect(missing).toBeGreaterThan(0);

      const table = spec.sink!.postgres!.table;
      const sunk = await count(`SELECT count(*) AS n FROM ${table}`);
      const withoutCustomer = await count(`SELECT count(*) AS n FROM ${table} WHERE customer_status IS NULL`);
      expect(joined + atBound + missing).toBe(sunk);
      expect(withoutCustomer).toBe(missing);
      expect(await count(`SELECT count(*) AS n FROM ${table} WHERE customer_id !~ '^cus_[0-9]{6}$'`)).toBe(0);
      // The one output behind the join: what reached the sink, batch by batch.
      expect(
        views.every(
          (v) => v.outputs.length === 1 && v.outputs[0]!.name === "" && v.outputs[0]!.sink === table,
        ),
      ).toBe(true);
      expect(sum((v) => v.outputs[0]!.outcomes.sink)).toBe(sunk);
      expect(sum((v) => v.outputs[0]!.outcomes.late)).toBe(0);

      // The latest batch, as the page's Latest batch panel gets it.
      const page = await findBatchProgress(db, { pipeline: spec.name });
      const latest = page!.latest!;
      expect(latest.batchId).toBe(views.at(-1)!.batchId);
      const held = await count(`SELECT count(*) AS n FROM join_held WHERE pipeline_version_id = $1`, [
        pipelineVersionId,
      ]);
      expect(held).toBeGreaterThan(100);
      const cp = (await findCheckpoint(prismaSqlClient(db), pipelineVersionId))!;
      expect(latest.join).toMatchObject({
        waiting: held,
        waitingBytes: cp.dimension.held!.bytes,
        versions: cp.dimension.versions!.rows,
        dimensionWatermark: new Date(cp.dimension.watermark!),
      });
      // The dimension's watermark: its newest change (T0 + 15 min) less the 10-minute delay, roughly.
      const minutesIn = (d: Date) => (d.getTime() - Date.UTC(2025, 0, 1)) / 60_000;
      expect(minutesIn(latest.join!.dimensionWatermark!)).toBeGreaterThan(4);
      expect(minutesIn(latest.join!.dimensionWatermark!)).toBeLessThanOrEqual(5);
      // Every row that entered the join is decided or still waiting.
      expect(sum((v) => v.join!.held) - sum((v) => v.join!.released)).toBe(held);
      // Recent batches: each batch's rows waiting after it, and what the one output behind the join wrote.
      const recent = (await findBatchProgress(db, { pipeline: spec.name, limit: 100 }))!.batches;
      expect(recent).toHaveLength(views.length);
      expect(recent[0]!.joinWaiting).toBe(held);
      expect(recent.map((b) => b.joinWaiting)).toEqual(views.map((v) => v.join!.waiting).reverse());
      expect(recent.reduce((n, b) => n + b.outputs[0]!.sink, 0)).toBe(sunk);
      expect(latest.outputs[0]).toMatchObject({ name: "", sink: table });
      expect(latest.outputs[0]!.watermark).not.toBeNull();

      // The graph: a Join phase with the rows waiting for the dimension beside it, outside the balance.
      const now = new Date();
      const signals = await getPipelineSignals(
        db,
        { pipeline: spec.name, range: { from: new Date(now.getTime() - 3_600_000), to: now } },
        now,
      );
      expect(signals!.flow.nodes.find((n) => n.id === "join")?.detail).toBe(
        `${changesTopic} as of event time, waits ≤ 15m`,
      );
      // The range holds every batch: the rows that started waiting less those released are the rows
      // waiting now, and the sink edge is the rows the sink table holds — not the batches' `sink`
      // outcome, which also counts the rows still waiting.
      const flow = signals!.flow;
      const edge = (to: string) => flow.edges.find((e) => e.to === to)!;
      expect(edge("join:waiting")).toMatchObject({ rows: held, state: true });
      expect(flow.nodes.find((n) => n.id === "join:waiting")?.holds).toEqual(cp.dimension.held);
      expect(edge("sink")).toMatchObject({ from: "join", rows: sunk });
      expect(signals!.totals.sink).toBe(sunk + held);
      expect(edge("join:dead-letter").rows).toBe(0); // onMissing: emit
      // The numbers add up: input = sink + every branch + waiting, and at the join in = out.
      const branches = flow.edges.filter((e) => e.leaves).reduce((n, e) => n + e.rows, 0);
      expect(sunk + branches + held).toBe(flow.input);
      expect(flow.input).toBe(sum((v) => v.inputRows));
      expect(edge("join").rows).toBe(sunk + held + edge("join:dead-letter").rows);
      expect(flow).toMatchObject({ outcomes: flow.input, waiting: held, balanced: true });
      console.log(
        `payments-enriched: ${views.length} batches, ${sunk} rows: ${joined} joined, ${atBound} at the bound, ${missing} missing; ${held} waiting (${latest.join!.waitingBytes} B); dimension watermark ${latest.join!.dimensionWatermark!.toISOString()}`,
      );
    },
  );
  it(
    "names the join's dimension_missing dead letters in the graph, apart from undecodable ones, and adds up",
    { timeout: 300_000 },
    async () => {
      // The same join with onMissing: deadLetter (the spec's default): the payments whose customer the
      // feed has not inserted are dead letters `dimension_missing`, some at once, some after waiting.
      const base = await enrichedSpec();
      const spec: TPipelineSpec = {
        ...base,
        name: "payments-enriched-dl",
        join: { ...base.join!, onMissing: "deadLetter" },
        sink: { postgres: { ...base.sink!.postgres!, table: "payments_enriched_dl" } },
      };
      const { pipelineVersionId, progress } = await drainPipeline(fx, spec);
      const deadLettered = progress.reduce((n, p) => n + ((p.join?.deadLettered as number) ?? 0), 0);
      expect(deadLettered).toBeGreaterThan(100);
      const dl = (missing: boolean) =>
        count(
          `SELECT count(*) AS n FROM dead_letters WHERE pipeline_version_id = $1 AND outcome = 'dead_letter' AND (reason LIKE 'dimension_missing:%') = $2`,
          [pipelineVersionId, missing],
        );
      const dimensionMissing = await dl(true);
      expect(dimensionMissing).toBe(deadLettered);
      const sunk = await count(`SELECT count(*) AS n FROM payments_enriched_dl`);
      const held = await count(`SELECT count(*) AS n FROM join_held WHERE pipeline_version_id = $1`, [
        pipelineVersionId,
      ]);

      const now = new Date();
      const flow = (await getPipelineSignals(
        db,
        { pipeline: spec.name, range: { from: new Date(now.getTime() - 3_600_000), to: now } },
        now,
      ))!.flow;
      const edge = (to: string) => flow.edges.find((e) => e.to === to)!;
      const label = (id: string) => flow.nodes.find((n) => n.id === id)?.label;
      expect(label("join:dead-letter")).toBe("dead letter (dimension missing)");
      expect(edge("join:dead-letter")).toMatchObject({ from: "join", rows: dimensionMissing, leaves: true });
      expect(label("decode:dead-letter")).toBe("dead letter (undecodable)");
      expect(edge("decode:dead-letter").rows).toBe(await dl(false));
      expect(edge("sink").rows).toBe(sunk);
      expect(edge("join:waiting").rows).toBe(held);
      const branches = flow.edges.filter((e) => e.leaves).reduce((n, e) => n + e.rows, 0);
      expect(sunk + branches + held).toBe(flow.input);
      expect(flow.balanced).toBe(true);
      console.log(
        `payments-enriched (onMissing: deadLetter): ${sunk} written, ${dimensionMissing} dimension_missing, ${held} waiting, of ${flow.input} read`,
      );
    },
  );
});

describe("the pipeline page of several outputs", () => {
  it(
    "shows each output's own late count and what reached its table: the demo's settlement views",
    { timeout: 300_000 },
    async () => {
      const shipped = parseSpecOrThrow(await readFile(path.join(DEMO, "settlement-views.yaml"), "utf8"));
      const spec: TPipelineSpec = {
        ...shipped,
        source: { kafka: { ...shipped.source.kafka, topic: fx.topic, maxOffsetsPerTrigger: 2500 } },
        eventTime: { ...shipped.eventTime!, idleTimeout: "6h" },
      };
      const { pipelineVersionId } = await drainPipeline(fx, spec);
      const rows = await db.batchLog.findMany({
        where: { pipelineVersionId },
        orderBy: { batchId: "asc" },
        select: BATCH_LOG_ROW_SELECT,
      });
      const views = rows.map(batchProgressView);
      const out = (name: string) => views.map((v) => v.outputs.find((o) => o.name === name)!);
      const total = (name: string, f: (o: ReturnType<typeof out>[number]) => number) =>
        out(name).reduce((n, o) => n + f(o), 0);
      expect(
        views.every((v) => v.outputs.map((o) => o.name).join() === "finance,fraud" && v.join === null),
      ).toBe(true);

      // Payments 2 min–3 h late: beyond the fraud view's 10 m + 20 m some are late there, none for
      // finance's two days — so none is late for the pipeline.
      expect(total("fraud", (o) => o.outcomes.late)).toBeGreaterThan(0);
      expect(total("finance", (o) => o.outcomes.late)).toBe(0);
      expect(views.reduce((n, v) => n + v.outcomes.late, 0)).toBe(0);
      // Each output's table holds exactly the rows its view says reached it (count() per window).
      for (const [name, table] of [
        ["fraud", "merchant_fraud_5m"],
        ["finance", "merchant_finance_5m"],
      ] as const) {
        expect(out(name).every((o) => o.sink === table)).toBe(true);
        expect(await count(`SELECT coalesce(sum(events), 0) AS n FROM ${table}`)).toBe(
          total(name, (o) => o.outcomes.sink),
        );
        expect(total(name, (o) => o.rows)).toBe(total(name, (o) => o.outcomes.sink + o.outcomes.late));
      }
      // Recent batches, one row each: every output's own rows, writes, late count and state — what
      // on-call reads to see the fraud view refusing payments the pipeline's own late count (0) hides.
      const page = (await findBatchProgress(db, { pipeline: spec.name, limit: 100 }))!;
      expect(page.batches).toHaveLength(views.length);
      for (const [name] of [["fraud"], ["finance"]] as const) {
        const of = page.batches.map((b) => b.outputs.find((o) => o.name === name)!);
        expect(of.reduce((n, o) => n + o.late, 0)).toBe(total(name, (o) => o.outcomes.late));
        expect(of.reduce((n, o) => n + o.sink, 0)).toBe(total(name, (o) => o.outcomes.sink));
        expect(of.reduce((n, o) => n + o.rows, 0)).toBe(total(name, (o) => o.rows));
        expect(of.map((o) => [o.stateRows, o.stateBytes])).toEqual(
          out(name)
            .map((o) => [o.stateRows, o.stateBytes])
            .reverse(),
        );
      }
      expect(page.batches.every((b) => b.late === 0 && b.joinWaiting === null)).toBe(true);
      const latest = page.latest!;
      expect(latest.outputs.map((o) => [o.name, o.sink])).toEqual([
        ["finance", "merchant_finance_5m"],
        ["fraud", "merchant_fraud_5m"],
      ]);
      // Finance keeps two days of windows, fraud lets go of its after 30 minutes.
      const [finance, fraud] = latest.outputs;
      expect(finance!.stateRows).toBeGreaterThan(fraud!.stateRows);
      expect(finance!.watermark).toEqual(fraud!.watermark); // the same delay (10 m); their lateness differs
      console.log(
        `settlement-views: ${views.length} batches; fraud late ${total("fraud", (o) => o.outcomes.late)}, finance late 0; state fraud ${fraud!.stateRows}, finance ${finance!.stateRows}`,
      );
    },
  );
});
