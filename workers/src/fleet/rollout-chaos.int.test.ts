// Guarantee: a blue/green rollout survives worker processes dying at any instant. Blue (serving) and
// green (a candidate from the earliest offsets, its own checkpoint and table) run side by side on two
// worker processes while a producer keeps writing; every few seconds (seeded) a worker is SIGKILLed
// and a new one started. Afterwards both sides' tables hold every produced event id exactly once with
// batches that tile the topic (auditExactlyOnce, against the producer's manifest), blue still serves,
// the workers' periodic reconciliation ran (as system:rollout) despite the kills, and a reconciliation
// of the caught-up sides compares clean. Duration: SLUICE_CHAOS_MS (default 30 s of kills).
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerSpec } from "@sluice/engine/testing";
import { Prng } from "@sluice/producer";
import { kafkaTopicOffsets, reconcileRollout, startRollout } from "@sluice/services";
import { createFleetHarness, fleetRunSummary, type FleetHarness } from "../testing/fleet-harness";
import {
  auditFleet,
  startFleet,
  startProducers,
  waitFleetCaughtUp,
  type FleetPipeline,
} from "../testing/pipeline-fleet";
import { isStarted, type WorkerProcess } from "../testing/worker-process";

const CHAOS_MS = Number(process.env.SLUICE_CHAOS_MS ?? 30_000);
const WORKERS = 2;
const NAME = "rollout-chaos";
const who = { actorUserId: null, actor: "owner@sluice.local", from: { origin: "cli" as const } };

let h: FleetHarness;
beforeAll(async () => {
  // As in sigkill-chaos.int.test.ts: random kills may hit one batch repeatedly; exactness is the point here.
  h = await createFleetHarness("rollout_chaos", {
    extraTopics: 0,
    workerEnv: { WORKER_MAX_UNFINISHED_ATTEMPTS: "100", WORKER_ROLLOUT_RECONCILE_INTERVAL_MS: "3000" },
  });
});
afterAll(async () => {
  await h?.close();
});

describe("rollout chaos", () => {
  it(
    `blue and green side by side, a worker SIGKILLed every few seconds for ${CHAOS_MS / 1000} s: both tables exact, blue serves, reconciliation clean`,
    { timeout: CHAOS_MS + 300_000 },
    async () => {
      const topic = h.topics[0]!;
      const producers = await startProducers(h.fx.kafka, [
        { topic, seed: 303, backlog: 3000, ratePerSecond: 80 },
      ]);
      const workers: WorkerProcess[] = Array.from({ length: WORKERS }, () => h.spawnWorker());
      await Promise.all(workers.map((w) => w.waitForLog(isStarted)));
      const [blue] = await startFleet(h.fx.pool, h.db, h.queue, [
        { name: NAME, topic, maxOffsetsPerTrigger: 400, every: "500ms" },
      ]);
      // Green: the same results (a new description is a new version), in its own table from the earliest offsets.
      const blueSpec = ledgerSpec(topic, {
        name: NAME,
        source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 400 } },
        sink: { postgres: { table: blue!.table } },
        trigger: { every: "500ms" },
      });
      const started = await startRollout(
        h.db,
        kafkaTopicOffsets(h.fx.kafka),
        who,
        { ...blueSpec, description: "candidate with the same results" },
        { from: { kind: "earliest" }, reason: "chaos" },
        { scheduler: h.queue },
      );
      const greenId = started.green.pipelineVersionId;
      // auditExactlyOnce reads an unqualified table: green's physical one through a view of the test's own.
      await h.fx.pool.query(`CREATE VIEW green_audit AS SELECT * FROM sluice_sinks."${blue!.table}@v2"`);
      const green: FleetPipeline = {
        ...blue!,
        name: `${NAME}-green`,
        table: "green_audit",
        pipelineVersionId: greenId,
      };

      const rng = Prng.from("rollout-chaos-1");
      const begun = Date.now();
      let kills = 0;
      while (Date.now() - begun < CHAOS_MS) {
        await sleep(rng.int(2000, 5000));
        const i = rng.int(0, WORKERS - 1);
        workers[i]!.child.kill("SIGKILL");
        await workers[i]!.exited;
        kills++;
        await sleep(rng.int(200, 1500));
        workers[i] = h.spawnWorker();
      }
      const manifests = await producers.stop();
      await waitFleetCaughtUp(h.fx.pool, h.fx.kafka, [blue!, green], 240_000);

      expect((await fleetRunSummary(h.db)).failed).toEqual([]);
      await auditFleet(h.fx.pool, h.fx.kafka, [blue!, green], manifests);
      const serving = await h.fx.pool.query<{ id: string }>(
        `SELECT serving_version_id AS id FROM pipelines WHERE name = $1`,
        [NAME],
      );
      expect(serving.rows[0]!.id).toBe(blue!.pipelineVersionId);
      const byWorkers = await h.fx.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM rollout_reconciliations WHERE requested_by = 'system:rollout'`,
      );
      expect(byWorkers.rows[0]!.n).toBeGreaterThan(0);
      const done = await reconcileRollout(h.fx.pool, h.db, NAME, who);
      expect(done.reconciliations).toMatchObject([
        { status: "compared", onlyBlue: 0, onlyGreen: 0, differing: 0 },
      ]);
      console.log(
        `[rollout chaos] ${kills} SIGKILLs; blue and green exact; ${byWorkers.rows[0]!.n} reconciliations by the workers; ` +
          `final: ${done.reconciliations[0]!.report!.counts.matching} keys matching`,
      );
      expect(kills).toBeGreaterThanOrEqual(Math.floor(CHAOS_MS / 5000));
    },
  );
});
