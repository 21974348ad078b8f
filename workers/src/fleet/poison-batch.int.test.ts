// Guarantee: a batch that kills every worker that runs it does not loop. Worker processes run with a
// small V8 heap (--max-old-space-size=192) and the topic starts with 30 records whose JSON parses into
// ~16 MB each (sendPoisonEvents): the batch holding them exhausts the heap, and the process dies with "JavaScript heap out
// of memory" — a real crash, nothing injected. Each attempt is counted in Postgres when it is claimed,
// so after 3 deaths the next claim fails the version with the batch id, its offset ranges and "the
// worker running it died 3 times", shown by `sluice status` and the fleet view. A healthy pipeline on
// the same workers keeps committing throughout; after the fix (workers with more memory) a restart
// re-runs the same batch and the sink is exact.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSluice, sendLedgerEvents, sendPoisonEvents, sinkEventIds } from "@sluice/engine/testing";
import { findFleet, restartPipelineRun } from "@sluice/services";
import { waitFor } from "@sluice/testing";
import { createFleetHarness, type FleetHarness } from "../testing/fleet-harness";
import { auditBatches, startFleet, waitFleetCaughtUp } from "../testing/pipeline-fleet";
import { isStarted, type WorkerProcess } from "../testing/worker-process";

let h: FleetHarness;
beforeAll(async () => {
  h = await createFleetHarness("poison", { extraTopics: 1 });
  const admin = h.fx.kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: h.topics.map((topic) => ({ topic, numPartitions: 2 })),
    waitForLeaders: true,
  });
  await admin.disconnect();
});
afterAll(async () => {
  await h?.close();
});

const POISON_RECORDS = 30;
const SMALL_HEAP = { NODE_OPTIONS: "--max-old-space-size=192" };

const heapDeath = (w: WorkerProcess) =>
  w.logs.some((l) => typeof l.msg === "string" && l.msg.includes("JavaScript heap out of memory"));

describe("a poison batch", () => {
  it(
    "kills its worker 3 times, then the version fails with the batch id, its ranges and the deaths; a healthy pipeline keeps running; after the fix a restart commits it exactly",
    { timeout: 420_000 },
    async () => {
      const [poisonTopic, healthyTopic] = h.topics as [string, string];
      // The poison batch is batch 0 (partition 0 offsets 0–29 and partition 1 offsets 0–29): the plan
      // spreads 60 offsets over two equal backlogs, and nothing is read ahead before the first batch.
      const expected = new Set(
        await sendPoisonEvents(h.fx.kafka, poisonTopic, { count: POISON_RECORDS, partition: 0 }),
      );
      for (const id of (
        await sendLedgerEvents(h.fx.kafka, poisonTopic, { prefix: "good-p0", count: 100, partitions: [0] })
      ).ids)
        expected.add(id);
      for (const id of (
        await sendLedgerEvents(h.fx.kafka, poisonTopic, { prefix: "good-p1", count: 130, partitions: [1] })
      ).ids)
        expected.add(id);
      const healthyIds = new Set(
        (
          await sendLedgerEvents(h.fx.kafka, healthyTopic, {
            prefix: "healthy",
            count: 200,
            partitions: [0, 1],
          })
        ).ids,
      );

      // Small-heap workers; each one that dies is replaced, as a process supervisor would.
      const died: WorkerProcess[] = [];
      let supervising = true;
      const spawnSmall = (): WorkerProcess => {
        const w = h.spawnWorker(SMALL_HEAP);
        void w.exited.then(() => {
          if (!supervising) return;
          died.push(w);
          if (died.length < 6) spawnSmall();
        });
        return w;
      };
      const first = [spawnSmall(), spawnSmall()];
      await Promise.all(first.map((w) => w.waitForLog(isStarted)));

      const [healthy] = await startFleet(h.fx.pool, h.db, h.queue, [
        { name: "healthy", topic: healthyTopic, maxOffsetsPerTrigger: 60, every: "1s" },
      ]);
      await waitFor(
        "the healthy pipeline's sink to hold its events",
        async () => (await sinkEventIds(h.fx.pool, "healthy")).length === healthyIds.size,
        120_000,
        250,
      );
      const [poison] = await startFleet(h.fx.pool, h.db, h.queue, [
        { name: "poison", topic: poisonTopic, maxOffsetsPerTrigger: 60, every: "200ms" },
      ]);

      const failed = await waitFor(
        "the poison version to fail",
        async () => {
          const r = await h.db.pipelineRun.findUnique({
            where: { pipelineVersionId: poison!.pipelineVersionId },
          });
          return r?.status === "failed" ? r : undefined;
        },
        300_000,
        250,
      );
      const firstLine =
        "batch 0 (partition 0 offsets 0–29, partition 1 offsets 0–29): the worker running it died 3 times";
      expect({ failedBatchId: failed.failedBatchId, firstLine: failed.lastError?.split("\n")[0] }).toEqual({
        failedBatchId: 0n,
        firstLine,
      });
      const plan = await h.fx.pool.query(
        `SELECT ranges FROM offset_log WHERE pipeline_version_id = $1 AND batch_id = 0`,
        [poison!.pipelineVersionId],
      );
      expect(plan.rows[0]?.ranges).toEqual([
        { partition: 0, from: 0, to: 30 },
        { partition: 1, from: 0, to: 30 },
      ]);
      // Exactly three processes died, each of them out of heap, and nothing of the batch was committed.
      // (The last may still be dying: near its heap limit a process spends seconds collecting garbage, so
      // its job's lock can expire and the next attempt start before its exit is seen.)
      await waitFor("the third worker's exit", async () => died.length >= 3, 60_000, 100);
      expect(died.length).toBe(3);
      expect(died.map(heapDeath)).toEqual([true, true, true]);
      expect(
        (
          await h.fx.pool.query(`SELECT count(*)::int AS n FROM batch_log WHERE pipeline_version_id = $1`, [
            poison!.pipelineVersionId,
          ])
        ).rows[0].n,
      ).toBe(0);

      // What an operator sees: `sluice status` and the fleet view name the batch, its ranges and the deaths.
      const status = await runSluice(["status", "poison"], { databaseUrl: h.fx.db.url });
      expect(status.code).toBe(0);
      expect(status.stdout).toContain(`run (table pipeline_runs): failed, failed at batch 0: ${firstLine}`);
      const row = (await findFleet(h.db)).find((r) => r.name === "poison");
      expect({ status: row?.status, reason: row?.reason }).toEqual({ status: "failed", reason: firstLine });

      // The healthy pipeline still runs on the same small-heap workers.
      for (const id of (
        await sendLedgerEvents(h.fx.kafka, healthyTopic, {
          prefix: "healthy-after",
          count: 100,
          partitions: [0, 1],
        })
      ).ids)
        healthyIds.add(id);
      await waitFor(
        "the healthy pipeline to read what came after the failure",
        async () => (await sinkEventIds(h.fx.pool, "healthy")).length === healthyIds.size,
        120_000,
        250,
      );
      expect((await sinkEventIds(h.fx.pool, "healthy")).sort()).toEqual([...healthyIds].sort());
      expect(died.length).toBe(3);

      // The fix: workers with the default heap; then restart. The same batch re-runs and commits.
      supervising = false;
      const small = h.spawned.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
      const big = h.spawnWorker();
      await big.waitForLog(isStarted);
      for (const w of small) w.child.kill("SIGTERM");
      await Promise.all(small.map((w) => w.exited));
      await restartPipelineRun(
        h.db,
        {
          pipelineVersionId: poison!.pipelineVersionId,
          actor: "user:oncall@sluice.local",
          reason: "workers have more memory",
        },
        { scheduler: h.queue },
      );
      await waitFleetCaughtUp(h.fx.pool, h.fx.kafka, [poison!, healthy!], 180_000);
      expect((await sinkEventIds(h.fx.pool, "poison")).sort()).toEqual([...expected].sort());
      const audit = await auditBatches(h.fx.pool, h.fx.kafka, poison!);
      const batch0 = await h.fx.pool.query(
        `SELECT progress FROM batch_log WHERE pipeline_version_id = $1 AND batch_id = 0`,
        [poison!.pipelineVersionId],
      );
      expect(batch0.rows[0].progress).toMatchObject({ replayed: true, inputRows: 60 });
      console.log(
        `[poison] 3 workers died out of heap on batch 0; failed with "${firstLine}"; after restart on a bigger heap: ${audit.batches} batches, sink exact`,
      );
    },
  );
});
