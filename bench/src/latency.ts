// End-to-end latency at a steady input rate (issue 22): Kafka append → committed, for every row of the
// payments ledger (the engine tests' ledgerSpec: contract, dedup, an expectation) run by real worker
// processes with `trigger: { every: 100ms }`. The producer sends at --rate for a warm-up and then for
// --seconds; each row's latency is its batch's commit time (batch_log.committed_at) minus its Kafka
// timestamp (the sink's _ingest_time, set by the producer's client as it sends), counted for the batches
// committed inside the measured window. Also reports the rate the producer held, so a run where the
// producer itself fell behind is visible.
//
//   npx tsx bench/src/latency.ts                                  # 5,000 events/s for 60 s, 2 workers
//   npx tsx bench/src/latency.ts --rate 2000 --seconds 30 --workers 1 --every 250ms
//
// Uses DATABASE_URL's server (a scratch database, dropped afterwards), REDIS_URL (a queue of its own)
// and KAFKA_BROKERS (a topic of its own, deleted afterwards).
import { loadavg } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { Kafka, logLevel } from "kafkajs";
import { z } from "zod";
import { loadEnv, ZServiceEnv } from "@sluice/config";
import { createPrismaClient } from "@sluice/db";
import { registerPipelineVersion } from "@sluice/engine";
import { ledgerSpec } from "@sluice/engine/testing";
import { PaymentProducer } from "@sluice/producer";
import { BatchQueue } from "@sluice/queue";
import { startPipelineRun, stopPipelineRun } from "@sluice/services";
import { fmt } from "./format";
import { percentile } from "./percentile";
import { createScratchDatabase } from "./scratch-database";
import { removeBenchQueues, spawnBenchWorker } from "./worker-process";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const { values } = parseArgs({
  options: {
    rate: { type: "string" },
    seconds: { type: "string" },
    warmup: { type: "string" },
    workers: { type: "string" },
    partitions: { type: "string" },
    every: { type: "string" },
  },
});
const opts = z
  .object({
    rate: z.coerce.number().int().min(1).default(5000),
    seconds: z.coerce.number().int().min(5).default(60),
    warmup: z.coerce.number().int().min(0).default(10),
    workers: z.coerce.number().int().min(1).max(8).default(2),
    partitions: z.coerce.number().int().min(1).max(64).default(3),
    every: z.string().default("100ms"),
  })
  .parse(values);
const env = loadEnv(ZServiceEnv);
const kafka = new Kafka({
  brokers: env.KAFKA_BROKERS,
  clientId: "sluice-bench-latency",
  logLevel: logLevel.NOTHING,
});
const stamp = Date.now().toString(36);
const topic = `bench_latency_${stamp}`;
const queueName = `bench.latency.${stamp}`;
const scratch = await createScratchDatabase(env.DATABASE_URL);
const { pool } = scratch;
const db = createPrismaClient(pool);
const redis = new Redis(env.REDIS_URL, { maxRetriesPerRequest: null });
const queue = new BatchQueue(queueName, redis);
const workers = Array.from({ length: opts.workers }, () =>
  spawnBenchWorker({ repoRoot: REPO_ROOT, databaseUrl: scratch.url, queueName }),
);

try {
  const producer = new PaymentProducer({
    topic,
    kafka,
    seed: "bench-latency",
    manifest: "counts",
    batchSize: 1000,
    log: () => undefined,
  });
  await producer.ensureTopic(opts.partitions);
  await Promise.all(workers.map((w) => w.started));
  const spec = ledgerSpec(topic, {
    name: "latency-ledger",
    owner: "bench",
    source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 20_000 } },
    sink: { postgres: { table: "latency_ledger" } },
    trigger: { every: opts.every },
  });
  const { pipelineVersionId } = await registerPipelineVersion(pool, spec);
  await startPipelineRun(db, { pipelineVersionId, actor: "system:bench" }, { scheduler: queue });

  const stop = new AbortController();
  const producing = producer.run({ ratePerSecond: opts.rate, signal: stop.signal, progressIntervalMs: 0 });
  await sleep(opts.warmup * 1000);
  const t0 = new Date();
  const sentAtT0 = producer.manifest().counts.messages;
  await sleep(opts.seconds * 1000);
  const t1 = new Date();
  const heldRate = (producer.manifest().counts.messages - sentAtT0) / opts.seconds;
  stop.abort();
  await producing;
  await producer.disconnect();
  // Let the last batches of the window commit before reading it.
  await sleep(2000);
  await stopPipelineRun(db, { pipelineVersionId, actor: "system:bench" });

  const rows = await pool.query<{ ms: number }>(
    `SELECT extract(epoch FROM (b.committed_at - s._ingest_time)) * 1000 AS ms
       FROM latency_ledger s JOIN batch_log b ON b.pipeline_version_id = $1 AND b.batch_id = s._batch_id
      WHERE b.committed_at >= $2 AND b.committed_at < $3`,
    [pipelineVersionId, t0, t1],
  );
  const p50 = (phase: string) =>
    `percentile_cont(0.5) WITHIN GROUP (ORDER BY (progress->'durationMs'->>'${phase}')::float) AS ${phase}_p50`;
  const batches = await pool.query<{
    n: string;
    input: string;
    total_p50: number;
    plan_p50: number;
    read_p50: number;
    process_p50: number;
    commit_p50: number;
  }>(
    `SELECT count(*) AS n, sum(input_rows) AS input, ${["total", "plan", "read", "process", "commit"].map(p50).join(", ")}
       FROM batch_log WHERE pipeline_version_id = $1 AND committed_at >= $2 AND committed_at < $3`,
    [pipelineVersionId, t0, t1],
  );
  const ms = rows.rows.map((r) => Number(r.ms));
  const b = batches.rows[0]!;
  const n = Number(b.n);
  console.log(
    `load average ${loadavg()[0]!.toFixed(1)}; ${opts.workers} worker process(es), trigger every ${opts.every}, ` +
      `${opts.partitions} partitions; producer asked ${fmt(opts.rate)}/s, held ${fmt(Math.round(heldRate))}/s over ${opts.seconds} s`,
  );
  console.log(
    `| rows measured | batches | rows a batch (mean) | batch time p50 (plan / read / process / commit) | latency p50 | p95 | p99 | max |\n` +
      `| --- | --- | --- | --- | --- | --- | --- | --- |\n` +
      `| ${fmt(ms.length)} | ${fmt(n)} (${(n / opts.seconds).toFixed(1)}/s) | ${fmt(Math.round(Number(b.input) / Math.max(1, n)))} | ` +
      `${Math.round(b.total_p50)} ms (${[b.plan_p50, b.read_p50, b.process_p50, b.commit_p50].map((x) => Math.round(x)).join(" / ")}) | ${Math.round(percentile(ms, 0.5))} ms | ` +
      `${Math.round(percentile(ms, 0.95))} ms | ${Math.round(percentile(ms, 0.99))} ms | ${Math.round(percentile(ms, 1))} ms |`,
  );
} finally {
  for (const w of workers) w.child.kill("SIGTERM");
  await Promise.all(workers.map((w) => w.exited));
  await removeBenchQueues(queue, redis, queueName);
  await redis.quit();
  await db.$disconnect();
  await scratch.close();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
}
