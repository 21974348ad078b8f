// Benchmark: N identical ledger pipelines run by 1, 2 and 4 worker processes (BullMQ, one batch job
// per scheduling turn), and the scheduling overhead between one batch's commit and the next batch's
// start while a backlog remains. Per round it also reports what one Postgres carries: batches
// committed per second, each batch's commit time and the commit's share of the batch time (the
// ratio that says when the commit dominates), and the state rows (dedup keys) the pipelines hold.
//
//   npx tsx bench/src/workers-throughput.ts                       # 4 pipelines × 40k messages, workers 1,2,4
//   npx tsx bench/src/workers-throughput.ts --pipelines 8 --messages 100000 --workers 1,2,4,8
//   npx tsx bench/src/workers-throughput.ts --pipelines 1,4,16 --workers 2 --max-offsets 200   # small batches: commit-bound
//
// Uses DATABASE_URL's server (a scratch database, dropped afterwards), REDIS_URL (a queue of its own,
// removed afterwards) and KAFKA_BROKERS (a topic of its own, deleted afterwards). Each round starts
// fresh pipelines at offset 0 of the same topic, so every round does the same work.
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
import { producePayments } from "@sluice/producer";
import { startPipelineRun, stopPipelineRun } from "@sluice/services";
import { BatchQueue } from "@sluice/queue";
import { fmt } from "./format";
import { createScratchDatabase } from "./scratch-database";
import { removeBenchQueues, spawnBenchWorker, type BenchWorker } from "./worker-process";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const ZOptions = z.object({
  pipelines: z
    .string()
    .default("4")
    .transform((s) => s.split(",").map((n) => Number(n.trim())))
    .pipe(z.array(z.number().int().min(1).max(64))),
  messages: z.coerce.number().int().min(1000).default(40_000),
  partitions: z.coerce.number().int().min(1).max(64).default(3),
  maxOffsets: z.coerce.number().int().min(100).default(2000),
  concurrency: z.coerce.number().int().min(1).max(64).default(2),
  workers: z
    .string()
    .default("1,2,4")
    .transform((s) => s.split(",").map((n) => Number(n.trim()))),
});
const { values } = parseArgs({
  options: {
    pipelines: { type: "string" },
    messages: { type: "string" },
    partitions: { type: "string" },
    "max-offsets": { type: "string" },
    concurrency: { type: "string" },
    workers: { type: "string" },
  },
});
const opts = ZOptions.parse({ ...values, maxOffsets: values["max-offsets"] });
const env = loadEnv(ZServiceEnv);

const pct = (xs: number[], p: number) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]! : NaN;

const kafka = new Kafka({
  brokers: env.KAFKA_BROKERS,
  clientId: "sluice-bench-workers",
  logLevel: logLevel.NOTHING,
});
const topic = `bench_workers_${Date.now().toString(36)}`;
const queueName = `bench.workers.${Date.now().toString(36)}`;
const scratch = await createScratchDatabase(env.DATABASE_URL);
const { pool } = scratch;
const db = createPrismaClient(pool);
const redis = new Redis(env.REDIS_URL, { maxRetriesPerRequest: null });
const queue = new BatchQueue(queueName, redis);

interface Worker extends BenchWorker {
  opens: { reason: string; ms: number }[];
}

function spawnWorker(): Worker {
  const opens: Worker["opens"] = [];
  const worker = spawnBenchWorker({
    repoRoot: REPO_ROOT,
    databaseUrl: scratch.url,
    queueName,
    env: { WORKER_CONCURRENCY: String(opts.concurrency) },
    onLog: (l) => {
      if (l.msg === "runner opened (lease taken)")
        opens.push({ reason: typeof l.reason === "string" ? l.reason : "?", ms: Number(l.ms ?? 0) });
    },
  });
  return { ...worker, opens };
}

async function caughtUp(pvs: string[], ends: Record<string, number>): Promise<boolean> {
  const res = await pool.query<{ end_offsets: Record<string, number> }>(
    `SELECT end_offsets FROM checkpoints WHERE pipeline_version_id = ANY($1)`,
    [pvs],
  );
  return (
    res.rows.length === pvs.length &&
    res.rows.every((r) => Object.entries(ends).every(([p, h]) => (r.end_offsets[p] ?? 0) >= h))
  );
}

interface Round {
  workers: number;
  pipelines: number;
  seconds: number;
  rowsPerSecond: number;
  batches: number;
  handoffMs: number[];
  opens: Record<string, number>;
  leaseMovedOpenMs: number[];
  firstReadMs: number[];
  /** Each committed batch's commit phase (ms), and the sums of commit and total batch time. */
  commitMs: number[];
  commitShare: number;
  stateRows: number;
}

async function round(workers: number, pipelines: number, maxOffsets: number, label: string): Promise<Round> {
  const procs = Array.from({ length: workers }, spawnWorker);
  await Promise.all(procs.map((p) => p.started));
  const pvs: string[] = [];
  for (let i = 0; i < pipelines; i++) {
    // The engine tests' ledger, without expectations, on this benchmark's topic and tables.
    const spec = ledgerSpec(topic, {
      name: `wbench-${label}-p${i}`,
      owner: "bench",
      source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: maxOffsets } },
      expectations: [],
      sink: { postgres: { table: `wbench_${label}_p${i}` } },
    });
    pvs.push((await registerPipelineVersion(pool, spec)).pipelineVersionId);
  }
  const admin = kafka.admin();
  await admin.connect();
  const ends = Object.fromEntries(
    (await admin.fetchTopicOffsets(topic)).map((o) => [String(o.partition), Number(o.high)]),
  );
  await admin.disconnect();

  const t0 = Date.now();
  for (const pv of pvs)
    await startPipelineRun(db, { pipelineVersionId: pv, actor: "system:bench" }, { scheduler: queue });
  while (!(await caughtUp(pvs, ends))) await sleep(100);
  const seconds = (Date.now() - t0) / 1000;

  for (const pv of pvs) await stopPipelineRun(db, { pipelineVersionId: pv, actor: "system:bench" });
  for (const p of procs) p.child.kill("SIGTERM");
  await Promise.all(procs.map((p) => p.exited));

  // Commit of batch n → start of batch n+1, while batch n left a backlog (so n+1 was due at once).
  const log = await pool.query<{
    pipeline_version_id: string;
    batch_id: string;
    committed_at: Date;
    progress: { durationMs: { total: number; read: number; commit: number }; backlog: number };
  }>(
    `SELECT pipeline_version_id, batch_id, committed_at, progress FROM batch_log WHERE pipeline_version_id = ANY($1) ORDER BY pipeline_version_id, batch_id`,
    [pvs],
  );
  const handoffMs: number[] = [];
  const firstReadMs: number[] = [];
  const commitMs = log.rows.map((r) => r.progress.durationMs.commit);
  const batchMs = log.rows.reduce((sum, r) => sum + r.progress.durationMs.total, 0);
  const state = await pool.query<{ rows: string | null }>(
    `SELECT sum(state_rows) AS rows FROM checkpoints WHERE pipeline_version_id = ANY($1)`,
    [pvs],
  );
  for (let i = 0; i < log.rows.length; i++) {
    const cur = log.rows[i]!;
    if (Number(cur.batch_id) === 0) firstReadMs.push(cur.progress.durationMs.read);
    const prev = log.rows[i - 1];
    if (!prev || prev.pipeline_version_id !== cur.pipeline_version_id || prev.progress.backlog === 0)
      continue;
    const start = cur.committed_at.getTime() - cur.progress.durationMs.total;
    handoffMs.push(start - prev.committed_at.getTime());
  }
  const opens: Record<string, number> = {};
  for (const o of procs.flatMap((p) => p.opens)) opens[o.reason] = (opens[o.reason] ?? 0) + 1;
  const total = Object.values(ends).reduce((a, b) => a + b, 0) * pipelines;
  return {
    workers,
    pipelines,
    seconds,
    rowsPerSecond: total / seconds,
    batches: log.rows.length,
    handoffMs,
    opens,
    leaseMovedOpenMs: procs.flatMap((p) =>
      p.opens.filter((o) => o.reason === "lease-moved").map((o) => o.ms),
    ),
    firstReadMs,
    commitMs,
    commitShare: batchMs > 0 ? commitMs.reduce((a, b) => a + b, 0) / batchMs : NaN,
    stateRows: Number(state.rows[0]?.rows ?? 0),
  };
}

try {
  const produced = await producePayments({
    topic,
    kafka,
    count: opts.messages,
    partitions: opts.partitions,
    seed: "bench-workers",
    duplicateShare: 0.05,
    malformedShare: 0.01,
    outOfOrderShare: 0.05,
    manifest: "counts",
    batchSize: 5000,
    log: () => undefined,
  });
  console.log(
    `load average ${loadavg()[0]!.toFixed(1)}; produced ${fmt(produced.manifest.counts.messages)} messages to ${topic} (${opts.partitions} partitions); ${opts.pipelines.join(", ")} pipelines per round, ${fmt(opts.maxOffsets)} offsets per batch, concurrency ${opts.concurrency} per worker`,
  );
  // Scheduling overhead alone: one pipeline, one worker with free slots, small batches (many hand-offs).
  const handoffBatch = Math.max(100, Math.floor(opts.messages / 100));
  const solo = await round(1, 1, handoffBatch, "solo");
  console.log(
    `scheduling overhead, 1 pipeline on 1 worker, ${solo.batches} batches of ≤ ${fmt(handoffBatch)} offsets: commit → next batch start ` +
      `p50 ${pct(solo.handoffMs, 0.5)} ms, p95 ${pct(solo.handoffMs, 0.95)} ms, max ${Math.max(...solo.handoffMs)} ms`,
  );
  const rounds: (Round & { load: number })[] = [];
  for (const p of opts.pipelines)
    for (const w of opts.workers) {
      const r = await round(w, p, opts.maxOffsets, `p${p}w${w}`);
      const load = loadavg()[0]!;
      rounds.push({ ...r, load });
      console.log(
        `  ${p} pipeline(s) on ${w} worker(s), load average ${load.toFixed(1)}: ${r.seconds.toFixed(1)} s, ${fmt(r.rowsPerSecond)} rows/s, ${r.batches} batches (${(r.batches / r.seconds).toFixed(1)}/s), commit p50 ${pct(r.commitMs, 0.5)} ms (${(100 * r.commitShare).toFixed(0)}% of batch time), hand-off p50 ${pct(r.handoffMs, 0.5)} ms p95 ${pct(r.handoffMs, 0.95)} ms, opens ${JSON.stringify(r.opens)}`,
      );
    }
  // "vs" is against the first round with the same pipeline count (its fewest workers).
  const base = (r: Round) => rounds.find((b) => b.pipelines === r.pipelines)!.rowsPerSecond;
  console.log(
    "\n| pipelines | worker processes | load avg | time (s) | rows/s (all pipelines) | vs fewest workers | batches | batches/s | commit p50 / p95 (ms) | commit share of batch time | state rows (dedup keys) | commit → next start p50 / p95 (ms) | runner opens (cold / lease-moved) | first batch read incl. consumer join p50 (ms) |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const r of rounds) {
    console.log(
      `| ${r.pipelines} | ${r.workers} | ${r.load.toFixed(1)} | ${r.seconds.toFixed(1)} | ${fmt(r.rowsPerSecond)} | ${(r.rowsPerSecond / base(r)).toFixed(2)}× | ${r.batches} | ${(r.batches / r.seconds).toFixed(1)} | ${pct(r.commitMs, 0.5)} / ${pct(r.commitMs, 0.95)} | ${(100 * r.commitShare).toFixed(0)}% | ${fmt(r.stateRows)} | ${pct(r.handoffMs, 0.5)} / ${pct(r.handoffMs, 0.95)} | ${r.opens.cold ?? 0} / ${r.opens["lease-moved"] ?? 0}${r.leaseMovedOpenMs.length ? ` (${pct(r.leaseMovedOpenMs, 0.5)})` : ""} | ${pct(r.firstReadMs, 0.5)} |`,
    );
  }
} finally {
  await removeBenchQueues(queue, redis, queueName);
  await redis.quit();
  await db.$disconnect();
  await scratch.close();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
}
