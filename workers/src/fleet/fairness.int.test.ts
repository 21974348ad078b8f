// Fairness: one pipeline with a huge backlog cannot starve the others. Batches are bounded
// (maxOffsetsPerTrigger) and each version has at most one job queued: a version with a backlog
// re-queues itself at the back of the queue after every batch, so the small pipelines' jobs are taken
// in between. Measured, not asserted as timings (timings on these machines are noisy): the small
// pipelines' end-to-end latency (batch commit − Kafka timestamp of each row) alone, then next to a
// pipeline draining a large backlog, on ONE worker process with 2 slots (the contended case).
// The issue asks for a 1M backlog (SLUICE_FAIRNESS_BACKLOG=1000000); the default is 300k to keep the
// suite short on the 2-core machines. The second phase lasts while the big backlog drains.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PaymentProducer } from "@sluice/producer";
import { createFleetHarness, type FleetHarness } from "../testing/fleet-harness";
import { fleetBacklog, startFleet, startProducers, type FleetPipeline } from "../testing/pipeline-fleet";
import { isStarted } from "../testing/worker-process";

const BIG_BACKLOG = Number(process.env.SLUICE_FAIRNESS_BACKLOG ?? 300_000);
const PHASE_MS = 20_000;

let h: FleetHarness;
beforeAll(async () => {
  h = await createFleetHarness("fair", { extraTopics: 1 });
});
afterAll(async () => {
  await h?.close();
});

const pct = (xs: number[], p: number) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]! : NaN;

async function latencies(p: FleetPipeline, from: Date, to: Date): Promise<{ ms: number[]; batches: number }> {
  const rows = await h.fx.pool.query<{ ms: number }>(
    `SELECT extract(epoch FROM (b.committed_at - s._ingest_time)) * 1000 AS ms
       FROM "${p.table}" s JOIN batch_log b ON b.pipeline_version_id = $1 AND b.batch_id = s._batch_id
      WHERE b.committed_at >= $2 AND b.committed_at < $3`,
    [p.pipelineVersionId, from, to],
  );
  const batches = await h.fx.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM batch_log WHERE pipeline_version_id = $1 AND committed_at >= $2 AND committed_at < $3`,
    [p.pipelineVersionId, from, to],
  );
  return { ms: rows.rows.map((r) => Number(r.ms)), batches: Number(batches.rows[0]!.n) };
}

describe("fairness", () => {
  it(
    `five small pipelines keep committing while one drains a ${BIG_BACKLOG.toLocaleString("en-US")}-message backlog on the same worker`,
    { timeout: 400_000 },
    async () => {
      const [bigTopic, smallTopic] = h.topics as [string, string];
      const big = new PaymentProducer({
        topic: bigTopic,
        kafka: h.fx.kafka,
        seed: 606,
        manifest: "counts",
        batchSize: 5000,
        log: () => undefined,
      });
      await big.ensureTopic(3);
      await big.produce({ count: BIG_BACKLOG });
      await big.disconnect();
      const producers = await startProducers(h.fx.kafka, [
        { topic: smallTopic, seed: 707, backlog: 0, ratePerSecond: 25 },
      ]);
      const worker = h.spawnWorker({ WORKER_CONCURRENCY: "2", WORKER_LOCK_DURATION_MS: "15000" });
      await worker.waitForLog(isStarted);

      const small = await startFleet(
        h.fx.pool,
        h.db,
        h.queue,
        [1, 2, 3, 4, 5].map((i) => ({
          name: `small-${i}`,
          topic: smallTopic,
          maxOffsetsPerTrigger: 1000,
          every: "1s",
        })),
      );
      await sleep(5000); // warm-up: consumers joined, first batches done
      const t0 = new Date();
      await sleep(PHASE_MS);
      const t1 = new Date();
      const [bigPipeline] = await startFleet(h.fx.pool, h.db, h.queue, [
        { name: "big", topic: bigTopic, maxOffsetsPerTrigger: 20_000, every: "1s" },
      ]);
      // Until the big backlog is drained (at most 5 minutes).
      const drainDeadline = Date.now() + 300_000;
      let bigLeft = BIG_BACKLOG;
      while (bigLeft > 0 && Date.now() < drainDeadline) {
        await sleep(500);
        bigLeft = (await fleetBacklog(h.fx.pool, h.fx.kafka, [bigPipeline!]))[bigPipeline!.name]!;
      }
      const t2 = new Date();
      const drainSeconds = (t2.getTime() - t1.getTime()) / 1000;
      await producers.stop();

      const alone = await Promise.all(small.map((p) => latencies(p, t0, t1)));
      const shared = await Promise.all(small.map((p) => latencies(p, t1, t2)));
      const bigRows = await h.fx.pool.query<{ n: string }>(
        `SELECT coalesce(sum(input_rows), 0) AS n FROM batch_log WHERE pipeline_version_id = $1`,
        [bigPipeline!.pipelineVersionId],
      );
      const all = (xs: { ms: number[] }[]) => xs.flatMap((x) => x.ms);
      const line = (label: string, xs: { ms: number[]; batches: number }[]) =>
        `${label}: latency p50 ${Math.round(pct(all(xs), 0.5))} ms, p95 ${Math.round(pct(all(xs), 0.95))} ms, max ${Math.round(Math.max(...all(xs)))} ms; batches per small pipeline ${xs.map((x) => x.batches).join("/")}`;
      console.log(
        `[fairness] 1 worker, 2 slots; 5 small pipelines at 25 msg/s, every 1 s\n  ${line("alone", alone)}\n  ${line(`beside the big one`, shared)}\n` +
          `  big pipeline: ${Number(bigRows.rows[0]!.n).toLocaleString("en-US")} rows in ${drainSeconds.toFixed(1)} s (batches of ≤ 20,000), ${bigLeft.toLocaleString("en-US")} offsets left`,
      );

      // No starvation, in counts rather than timings: the big pipeline re-queues behind the others
      // after each batch, so every small pipeline commits about once per big batch — or once per its
      // trigger (1 s) when big batches come faster than that — at least half as often, however slow or
      // fast the machine is.
      expect(bigLeft).toBe(0);
      const bigBatches = Math.ceil(BIG_BACKLOG / 20_000);
      const chances = Math.min(bigBatches, Math.floor(drainSeconds / 1));
      for (const s of shared) expect(s.batches).toBeGreaterThanOrEqual(Math.max(2, Math.floor(chances / 2)));
    },
  );
});
