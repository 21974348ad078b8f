// Guarantee: worker processes can die at any instant — SIGKILL, no shutdown — and every pipeline still
// reaches the end of its topic with every event id in its sink exactly once (product.md, semantics 1
// and 2; issue "Workers": the chaos test).
//
// Three worker processes run six pipelines over two topics while producers keep writing. Every few
// seconds (seeded) a random worker is SIGKILLed and a new one started. Killed batches are picked up
// again when BullMQ finds their job stalled, and re-run over their recorded plan; the reconciler
// rebuilds anything lost. Afterwards each ledger sink is audited: every event id once, gap-free
// balanced batches that tile the topic, each batch equal to its plan; the windowed pipeline's result
// must equal an uninterrupted run of the same spec over the same topic.
// Duration: SLUICE_CHAOS_MS (default 75 s of kills; the issue asks for "a couple of minutes" — scaled
// down for the 2-core machines, set SLUICE_CHAOS_MS=120000 for the full run).
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelineRunner, registerPipelineVersion } from "@sluice/engine";
import { ledgerSpec } from "@sluice/engine/testing";
import { Prng } from "@sluice/producer";
import { createFleetHarness, fleetRunSummary, type FleetHarness } from "../testing/fleet-harness";
import {
  auditBatches,
  auditFleet,
  startFleet,
  startProducers,
  waitFleetCaughtUp,
  type FleetPipeline,
} from "../testing/pipeline-fleet";
import { startWorkerKiller } from "../testing/worker-killer";
import { isStarted, type WorkerProcess } from "../testing/worker-process";

const CHAOS_MS = Number(process.env.SLUICE_CHAOS_MS ?? 75_000);
const WORKERS = 3;

/** 1-minute tumbling windows per merchant (update mode), as in the engine's stateful crash test. */
const windows = (table: string) => ({
  eventTime: { column: "event_time", watermarkDelay: "2m", idleTimeout: "1h" },
  expectations: [],
  transform: { filter: "type in ['settlement', 'refund']" },
  aggregate: {
    window: { tumbling: "1m" },
    groupBy: ["merchant_id"],
    measures: {
      settled: "sum(amount)",
      refunded: "sum(amount) if type == 'refund'",
      events: "count()",
      customers: "count_distinct(customer_id)",
    },
    outputMode: "update",
    allowedLateness: "2m",
  },
  sink: { postgres: { table } },
});
const WINDOW_COLUMNS = `merchant_id, window_start, window_end, settled::text, refunded::text, events::int, customers::int`;

let h: FleetHarness;
beforeAll(async () => {
  // Random kills can hit the same batch several times in a row (its re-run lands on the next victim),
  // which the poison-batch limit would rightly take for a batch that kills its workers; this test is
  // about exactness under crashes, so it lifts the limit (poison-batch.int.test.ts tests the limit).
  h = await createFleetHarness("chaos", {
    extraTopics: 1,
    workerEnv: { WORKER_MAX_UNFINISHED_ATTEMPTS: "100" },
  });
});
afterAll(async () => {
  await h?.close();
});

describe("worker chaos", () => {
  it(
    `3 workers, 6 pipelines, producers running: a random worker SIGKILLed every few seconds for ${CHAOS_MS / 1000} s — every sink ends exactly once`,
    { timeout: CHAOS_MS + 300_000 },
    async () => {
      const [a, b] = h.topics as [string, string];
      const producers = await startProducers(h.fx.kafka, [
        { topic: a, seed: 101, backlog: 4000, ratePerSecond: 100 },
        { topic: b, seed: 202, backlog: 4000, ratePerSecond: 100 },
      ]);
      const workers: WorkerProcess[] = Array.from({ length: WORKERS }, () => h.spawnWorker());
      await Promise.all(workers.map((w) => w.waitForLog(isStarted)));
      const fleet: FleetPipeline[] = await startFleet(h.fx.pool, h.db, h.queue, [
        { name: "chaos-a1", topic: a, maxOffsetsPerTrigger: 300, every: "500ms" },
        { name: "chaos-a2", topic: a, maxOffsetsPerTrigger: 700, every: "1s" },
        {
          name: "chaos-windows",
          topic: a,
          maxOffsetsPerTrigger: 1500,
          every: "2s",
          overrides: windows("chaos_windows"),
        },
        { name: "chaos-b1", topic: b, maxOffsetsPerTrigger: 300, every: "500ms" },
        { name: "chaos-b2", topic: b, maxOffsetsPerTrigger: 700, every: "1s" },
        { name: "chaos-b3", topic: b, maxOffsetsPerTrigger: 1500, every: "2s" },
      ]);

      const started = Date.now();
      const killer = startWorkerKiller(workers, () => h.spawnWorker(), Prng.from("worker-chaos-1"));
      await sleep(CHAOS_MS);
      const kills = await killer.stop();
      const manifests = await producers.stop();
      const drainStarted = Date.now();
      await waitFleetCaughtUp(h.fx.pool, h.fx.kafka, fleet, 240_000);
      const drainMs = Date.now() - drainStarted;

      const summary = await fleetRunSummary(h.db);
      expect(summary.failed).toEqual([]);
      const ledgers = fleet.filter((p) => p.name !== "chaos-windows");
      const windowed = fleet.find((p) => p.name === "chaos-windows")!;
      const ledgerAudit = await auditFleet(h.fx.pool, h.fx.kafka, ledgers, manifests);
      const windowAudit = await auditBatches(h.fx.pool, h.fx.kafka, windowed);
      const batches = ledgerAudit.batches + windowAudit.batches;
      const replayed = ledgerAudit.replayed + windowAudit.replayed;

      // Windows: the same spec drained in this process without interruption gives the same result.
      const referenceSpec = ledgerSpec(a, {
        name: "chaos-windows-reference",
        source: { kafka: { topic: a, startingOffsets: "earliest", maxOffsetsPerTrigger: 1500 } },
        ...windows("chaos_windows_reference"),
      });
      const reference = await registerPipelineVersion(h.fx.pool, referenceSpec);
      const runner = await PipelineRunner.open(h.fx.resources, {
        pipelineVersionId: reference.pipelineVersionId,
        spec: referenceSpec,
        owner: "reference",
      });
      try {
        while ((await runner.runBatch()).kind === "committed");
      } finally {
        await runner.close();
      }
      const chaosWindows = await h.fx.pool.query(
        `SELECT ${WINDOW_COLUMNS} FROM chaos_windows ORDER BY window_start, merchant_id`,
      );
      const referenceWindows = await h.fx.pool.query(
        `SELECT ${WINDOW_COLUMNS} FROM chaos_windows_reference ORDER BY window_start, merchant_id`,
      );
      expect(chaosWindows.rows.length).toBeGreaterThan(100);
      expect(chaosWindows.rows).toEqual(referenceWindows.rows);
      const messages = [...manifests.values()].reduce((s, m) => s + m.counts.messages, 0);
      const stalledRecoveries = h.spawned
        .flatMap((w) => w.logs)
        .filter((l) => l.msg === "runner opened (lease taken)").length;
      console.log(
        `[chaos] ${kills} SIGKILLs in ${Math.round((Date.now() - started - drainMs) / 1000)} s; ${messages} messages on 2 topics; ` +
          `${batches} committed batches over 6 pipelines, ${replayed} re-ran a recorded plan; ${stalledRecoveries} runner (re)opens; ` +
          `caught up ${drainMs} ms after the producers stopped; 5 ledgers exact, ${chaosWindows.rows.length} windows equal to an uninterrupted run`,
      );
      expect(kills).toBeGreaterThanOrEqual(Math.floor(CHAOS_MS / 5000));
    },
  );
});
