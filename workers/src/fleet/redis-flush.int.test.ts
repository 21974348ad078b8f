// Guarantee: Redis holds no truth. Losing everything in it (FLUSHALL — the same as a restart of a
// Redis without persistence) loses queued jobs, never data: each worker's reconciler rebuilds the
// current turn's job of every running version from Postgres within seconds — of each partition group
// of a version read in groups —, in-flight batches commit or re-run over their plan, and the sinks
// stay exact.
// Runs on a Redis server of its own (the shared one serves other tests at the same time).
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFleetHarness, fleetRunSummary, type FleetHarness } from "../testing/fleet-harness";
import { auditFleet, startFleet, startProducers, waitFleetCaughtUp } from "../testing/pipeline-fleet";
import { startPrivateRedis, type PrivateRedis } from "../testing/private-redis";
import { waitFor } from "@sluice/testing";
import { isStarted } from "../testing/worker-process";

let redis: PrivateRedis;
let h: FleetHarness;
beforeAll(async () => {
  redis = await startPrivateRedis();
  h = await createFleetHarness("flush", { extraTopics: 0, redisUrl: redis.url });
});
afterAll(async () => {
  await h?.close();
  await redis?.stop();
});

async function lastCommitAt(pv: string): Promise<number> {
  const r = await h.fx.pool.query<{ at: Date | null }>(
    `SELECT max(committed_at) AS at FROM batch_log WHERE pipeline_version_id = $1`,
    [pv],
  );
  return r.rows[0]?.at?.getTime() ?? 0;
}

describe("Redis flushed mid-run", () => {
  it(
    "FLUSHALL twice while 2 workers run 3 pipelines under load: work resumes by itself within seconds and every sink is exact",
    { timeout: 300_000 },
    async () => {
      const producers = await startProducers(h.fx.kafka, [
        { topic: h.fx.topic, seed: 303, backlog: 3000, ratePerSecond: 100 },
      ]);
      const workers = [h.spawnWorker(), h.spawnWorker()];
      await Promise.all(workers.map((w) => w.waitForLog(isStarted)));
      const fleet = await startFleet(h.fx.pool, h.db, h.queue, [
        { name: "flush-1", topic: h.fx.topic, maxOffsetsPerTrigger: 400, every: "500ms" },
        { name: "flush-2", topic: h.fx.topic, maxOffsetsPerTrigger: 800, every: "1s", parallelism: 3 },
        { name: "flush-3", topic: h.fx.topic, maxOffsetsPerTrigger: 2000, every: "3s" },
      ]);
      const client = new Redis(redis.url);
      const recoveries: number[] = [];
      try {
        for (let flush = 0; flush < 2; flush++) {
          await waitFor(
            "a batch of every pipeline",
            async () =>
              (await Promise.all(fleet.map((p) => lastCommitAt(p.pipelineVersionId)))).every((t) => t > 0),
            90_000,
          );
          await sleep(2000);
          const flushedAt = Date.now();
          await client.flushall();
          // Every pipeline commits again — the reconciler rebuilt its job (interval 2 s here).
          await waitFor(
            "every pipeline to commit after FLUSHALL",
            async () =>
              (await Promise.all(fleet.map((p) => lastCommitAt(p.pipelineVersionId)))).every(
                (t) => t > flushedAt,
              ),
            60_000,
            100,
          );
          recoveries.push(Date.now() - flushedAt);
        }
      } finally {
        client.disconnect();
      }
      const manifests = await producers.stop();
      await waitFleetCaughtUp(h.fx.pool, h.fx.kafka, fleet, 120_000);
      expect((await fleetRunSummary(h.db)).failed).toEqual([]);
      const { batches, replayed } = await auditFleet(h.fx.pool, h.fx.kafka, fleet, manifests);

      // The workers survived the flush. Jobs that were waiting (delayed until their trigger) were lost
      // and rebuilt by the reconcilers; batches in flight at the flush queued their next turn themselves.
      // flush-3 (every 3 s, sub-second batches) is nearly always waiting, so at least one rebuild shows.
      for (const w of workers) expect(w.child.exitCode).toBeNull();
      const rebuilt = workers
        .flatMap((w) => w.logs)
        .filter((l) => l.msg === "reconciler rebuilt a batch job from Postgres").length;
      expect(rebuilt).toBeGreaterThanOrEqual(1);
      console.log(
        `[flush] 2 × FLUSHALL: every pipeline committed again ${recoveries.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(" and ")} after the flush; ${rebuilt} jobs rebuilt by reconcilers; ${batches} batches (${replayed} re-ran a recorded plan); every sink exact`,
      );
    },
  );
});
