// Guarantee: when a worker dies between planning a batch and committing it, another worker takes the
// stalled job over (once its BullMQ lock expires) and re-runs exactly the planned batch — same id,
// same offset ranges — and the sink stays exact. Deterministic: the test waits for the moment a plan
// is recorded but not committed, and SIGKILLs the worker that holds that batch.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFleetHarness, type FleetHarness } from "../testing/fleet-harness";
import { auditFleet, startFleet, startProducers, waitFleetCaughtUp } from "../testing/pipeline-fleet";
import { isStarted } from "../testing/worker-process";

let h: FleetHarness;
beforeAll(async () => {
  h = await createFleetHarness("stalled", { extraTopics: 0 });
});
afterAll(async () => {
  await h?.close();
});

describe("stalled batch job", () => {
  it(
    "a worker SIGKILLed between plan and commit: another worker re-runs the same planned batch, and the sink is exact",
    { timeout: 300_000 },
    async () => {
      const producers = await startProducers(h.fx.kafka, [
        { topic: h.fx.topic, seed: 909, backlog: 60_000, ratePerSecond: 1 },
      ]);
      const workers = [h.spawnWorker(), h.spawnWorker()];
      await Promise.all(workers.map((w) => w.waitForLog(isStarted)));
      const [p] = await startFleet(h.fx.pool, h.db, h.queue, [
        { name: "stalled", topic: h.fx.topic, maxOffsetsPerTrigger: 15_000, every: "1s" },
      ]);
      const pv = p!.pipelineVersionId;

      // The moment batch N is planned (offset_log) but not committed, on a known worker. If the batch
      // happens to commit between that check and the kill (a few ms), try again with a fresh worker.
      type Progress = {
        replayed: boolean;
        sources: { partition: number; startOffset: number; endOffset: number }[];
      };
      let outcome:
        | {
            victim: { batchId: number; ranges: unknown };
            dyingPid: number;
            survivorPid: number;
            takeoverMs: number;
          }
        | undefined;
      for (let attempt = 0; attempt < 3 && !outcome; attempt++) {
        let victim: { batchId: number; workerId: string; ranges: unknown } | undefined;
        const deadline = Date.now() + 120_000;
        while (!victim && Date.now() < deadline) {
          const r = await h.fx.pool.query<{ batch_id: string; ranges: unknown; worker: string | null }>(
            `SELECT o.batch_id, o.ranges, r.batch_worker_id AS worker
             FROM checkpoints c JOIN offset_log o ON o.pipeline_version_id = c.pipeline_version_id AND o.batch_id = c.last_batch_id + 1
             JOIN pipeline_runs r ON r.pipeline_version_id = c.pipeline_version_id
            WHERE c.pipeline_version_id = $1 AND c.last_batch_id >= 0`,
            [pv],
          );
          const row = r.rows[0];
          if (row?.worker)
            victim = { batchId: Number(row.batch_id), workerId: row.worker, ranges: row.ranges };
          else await sleep(10);
        }
        expect(victim).toBeDefined();
        const dying = workers.find((w) => victim!.workerId.split(":")[1] === String(w.child.pid))!;
        dying.child.kill("SIGKILL");
        await dying.exited;
        const killedAt = Date.now();
        let progress: Progress | undefined;
        while (!progress) {
          const r = await h.fx.pool.query<{ progress: Progress }>(
            `SELECT progress FROM batch_log WHERE pipeline_version_id = $1 AND batch_id = $2`,
            [pv, victim!.batchId],
          );
          progress = r.rows[0]?.progress;
          if (!progress && Date.now() - killedAt > 60_000)
            throw new Error(`batch ${victim!.batchId} was not committed within 60 s of the kill`);
          if (!progress) await sleep(100);
        }
        const survivor = workers.find((w) => w !== dying)!;
        const committer = await h.fx.pool.query<{ worker: string }>(
          `SELECT lease_owner AS worker FROM checkpoints WHERE pipeline_version_id = $1`,
          [pv],
        );
        workers.splice(workers.indexOf(dying), 1, h.spawnWorker());
        if (!progress.replayed) continue; // it had committed just before the kill
        expect(
          progress.sources.map((s) => ({ partition: s.partition, from: s.startOffset, to: s.endOffset })),
        ).toEqual(victim!.ranges);
        // Re-run by the other worker (or, if it has moved on since, at least not by the dead one).
        expect(committer.rows[0]!.worker.split(":")[1]).not.toBe(String(dying.child.pid));
        outcome = {
          victim: victim!,
          dyingPid: dying.child.pid!,
          survivorPid: survivor.child.pid!,
          takeoverMs: Date.now() - killedAt,
        };
      }
      expect(outcome).toBeDefined();
      const { victim, dyingPid, survivorPid, takeoverMs } = outcome!;

      const manifests = await producers.stop();
      await waitFleetCaughtUp(h.fx.pool, h.fx.kafka, [p!], 120_000);
      await auditFleet(h.fx.pool, h.fx.kafka, [p!], manifests);
      console.log(
        `[stalled] worker ${dyingPid} killed holding planned batch ${victim.batchId}; worker ${survivorPid} re-ran the same ranges ${(takeoverMs / 1000).toFixed(1)} s later (lock 5 s); sink exact`,
      );
    },
  );
});
