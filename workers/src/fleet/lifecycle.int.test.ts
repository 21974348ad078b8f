// Lifecycle commands against worker processes under load: pause takes effect after the in-flight
// batch (never a half batch: no plan recorded beyond the last commit), nothing runs while paused,
// resume continues where it stopped, stop ends it, and every transition is recorded with who and why.
// Also: the worker registry and the Prometheus endpoint of a worker process.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  findWorkers,
  getPipelineRun,
  pausePipelineRun,
  resumePipelineRun,
  stopPipelineRun,
} from "@sluice/services";
import { createFleetHarness, type FleetHarness } from "../testing/fleet-harness";
import {
  auditFleet,
  startFleet,
  startProducers,
  waitFleetCaughtUp,
  type FleetPipeline,
} from "../testing/pipeline-fleet";
import { waitFor } from "@sluice/testing";
import { isStarted } from "../testing/worker-process";

let h: FleetHarness;
beforeAll(async () => {
  h = await createFleetHarness("lifecycle", { extraTopics: 0 });
});
afterAll(async () => {
  await h?.close();
});

const actor = "user:oona@sluice.local";

async function lastBatch(p: FleetPipeline): Promise<number> {
  const r = await h.fx.pool.query<{ last_batch_id: string }>(
    `SELECT last_batch_id FROM checkpoints WHERE pipeline_version_id = $1`,
    [p.pipelineVersionId],
  );
  return Number(r.rows[0]!.last_batch_id);
}

describe("lifecycle on worker processes", () => {
  it(
    "pause/resume/stop of 3 pipelines on 2 workers under load: no half batch, nothing while paused, history recorded, sinks exact",
    { timeout: 300_000 },
    async () => {
      const producers = await startProducers(h.fx.kafka, [
        { topic: h.fx.topic, seed: 808, backlog: 4000, ratePerSecond: 100 },
      ]);
      const workers = [h.spawnWorker(), h.spawnWorker()];
      await Promise.all(workers.map((w) => w.waitForLog(isStarted)));
      const fleet = await startFleet(h.fx.pool, h.db, h.queue, [
        { name: "life-1", topic: h.fx.topic, maxOffsetsPerTrigger: 300, every: "500ms" },
        { name: "life-2", topic: h.fx.topic, maxOffsetsPerTrigger: 600, every: "1s" },
        { name: "life-3", topic: h.fx.topic, maxOffsetsPerTrigger: 1000, every: "1s" },
      ]);
      await waitFor(
        "two batches of each pipeline",
        async () => (await Promise.all(fleet.map(lastBatch))).every((b) => b >= 1),
        90_000,
      );

      // Pause all three, mid-stream.
      for (const p of fleet)
        await pausePipelineRun(h.db, {
          pipelineVersionId: p.pipelineVersionId,
          actor,
          reason: "maintenance window",
        });
      await waitFor(
        "all paused",
        async () =>
          (await Promise.all(fleet.map((p) => getPipelineRun(h.db, p.pipelineVersionId)))).every(
            (r) => r?.phase === "paused",
          ),
        60_000,
        100,
      );
      const pausedAt = await Promise.all(fleet.map(lastBatch));
      for (const [i, p] of fleet.entries()) {
        const halfBatch = await h.fx.pool.query(
          `SELECT batch_id FROM offset_log WHERE pipeline_version_id = $1 AND batch_id > $2`,
          [p.pipelineVersionId, pausedAt[i]],
        );
        expect({ pipeline: p.name, plannedNotCommitted: halfBatch.rows }).toEqual({
          pipeline: p.name,
          plannedNotCommitted: [],
        });
      }
      await sleep(3000);
      expect(await Promise.all(fleet.map(lastBatch))).toEqual(pausedAt);

      // Resume; then stop once the producers are done and everything is read.
      for (const p of fleet)
        await resumePipelineRun(
          h.db,
          { pipelineVersionId: p.pipelineVersionId, actor },
          { scheduler: h.queue },
        );
      await waitFor(
        "batches after resuming",
        async () => (await Promise.all(fleet.map(lastBatch))).every((b, i) => b > pausedAt[i]!),
        60_000,
      );
      const manifests = await producers.stop();
      await waitFleetCaughtUp(h.fx.pool, h.fx.kafka, fleet, 120_000);
      for (const p of fleet)
        await stopPipelineRun(h.db, { pipelineVersionId: p.pipelineVersionId, actor, reason: "end of test" });
      await waitFor(
        "all stopped",
        async () =>
          (await Promise.all(fleet.map((p) => getPipelineRun(h.db, p.pipelineVersionId)))).every(
            (r) => r?.phase === "stopped",
          ),
        60_000,
        100,
      );
      await auditFleet(h.fx.pool, h.fx.kafka, fleet, manifests);

      for (const p of fleet) {
        const run = await getPipelineRun(h.db, p.pipelineVersionId);
        const history = run!.transitions.reverse();
        // Commands by the operator; "paused"/"stopped" by a worker when a batch was in flight.
        expect(history.filter((t) => t.actor === actor).map((t) => [t.action, t.reason])).toEqual([
          ["pause", "maintenance window"],
          ["resume", ""],
          ["stop", "end of test"],
        ]);
        expect(
          history
            .filter((t) => t.actor !== actor)
            .every((t) => t.actor.startsWith("worker:") || t.action === "start"),
        ).toBe(true);
      }

      // The worker registry and a worker's metrics endpoint.
      const registry = await findWorkers(h.db);
      expect(
        registry
          .filter((w) => w.state === "alive")
          .map((w) => w.pid)
          .sort(),
      ).toEqual(workers.map((w) => w.child.pid).sort());
      const metrics = await (await fetch(`http://127.0.0.1:${workers[0]!.metricsPort()}/metrics`)).text();
      expect(metrics).toMatch(/sluice_worker_heartbeats_total \d+/);
      expect(metrics).toMatch(
        /sluice_pipeline_batch_duration_seconds_bucket\{le="[^"]+",pipeline="life-\d",version="1",phase="commit"\}/,
      );
    },
  );
});
