// The peers benchmark: the same windowed settlements workload on Sluice, Flink and Spark, from one
// topic, checked and timed — one command (docs/performance.md, "Peers").
//
//   npx tsx bench/src/peers.ts                                   # 300 merchants, 1M events, 3 rounds
//   npx tsx bench/src/peers.ts --merchants 20000 --messages 1000000 --rounds 3
//   npx tsx bench/src/peers.ts --sluice-workers 2 --sluice-parallelism 2   # once specs have parallelism
//   npx tsx bench/src/peers.ts --peers sluice --rounds 1 --sluice-cpu-prof /tmp/prof   # where Node's time goes
//
// Loads one topic once (the demo producer: duplicates, malformed, out-of-order and late events over K
// merchants), recomputes the expected windows from the raw records in SQL, then runs each engine on
// it as a whole process, one after the other, over several rounds in rotating order. Every sink is
// checked every round; a run that differs is reported as wrong, with what differed. Prints each run's
// wall time, the ratios, the medians over rounds and what each engine guaranteed in the run — and the
// CPU each run used, its own and the whole machine's, against the cores there are: a run that keeps
// every core busy cannot get faster here by running in parallel, only by using less CPU.
// Java 17 and Maven build bench/peers on first use (never part of `npm test`). Uses DATABASE_URL's
// server (a scratch database, dropped afterwards), KAFKA_BROKERS (a fresh topic, deleted afterwards).
import { mkdir } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Kafka, logLevel } from "kafkajs";
import { z } from "zod";
import { loadEnv, ZServiceEnv } from "@sluice/config";
import { createTestUsers } from "@sluice/testing";
import { fmt } from "./format";
import { createScratchDatabase } from "./scratch-database";
import { checkSink, isExact, type SinkCheck } from "./peers/check-sink";
import { buildPeers, javaCommand, jdbcFor, peersDir } from "./peers/jvm-peers";
import { computeExpected, createPeerSinkSql, loadReference, produceWorkload } from "./peers/peers-workload";
import { BENCH_ACTOR, runSluice, sluicePhases } from "./peers/sluice-peer";
import { tail, timeProcess, type ProcessRun } from "./peers/timed-process";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const ENGINES = ["sluice", "flink", "spark"] as const;
type Engine = (typeof ENGINES)[number];

const { values } = parseArgs({
  options: {
    messages: { type: "string" },
    merchants: { type: "string" },
    partitions: { type: "string" },
    "max-offsets": { type: "string" },
    rounds: { type: "string" },
    peers: { type: "string" },
    "flink-checkpoint-ms": { type: "string" },
    "flink-mode": { type: "string" },
    "flink-align-ms": { type: "string" },
    "spark-state-store": { type: "string" },
    "sluice-workers": { type: "string" },
    "sluice-parallelism": { type: "string" },
    "sluice-cpu-prof": { type: "string" },
  },
});
const opts = z
  .object({
    messages: z.coerce.number().int().min(10_000).default(1_000_000),
    merchants: z.coerce.number().int().min(1).default(300),
    partitions: z.coerce.number().int().min(1).max(64).default(3),
    maxOffsets: z.coerce.number().int().min(100).default(50_000),
    rounds: z.coerce.number().int().min(1).default(3),
    peers: z
      .string()
      .default(ENGINES.join(","))
      .transform((s) => s.split(",").map((p) => z.enum(ENGINES).parse(p.trim()))),
    flinkCheckpointMs: z.coerce.number().int().min(0).default(0),
    flinkMode: z.enum(["update", "final"]).default("update"),
    flinkAlignMs: z.coerce.number().int().min(0).default(60_000),
    sparkStateStore: z.enum(["hdfs", "rocksdb"]).default("hdfs"),
    sluiceWorkers: z.coerce.number().int().min(0).default(0),
    sluiceParallelism: z.coerce.number().int().min(1).default(1),
    sluiceCpuProf: z.string().optional(),
  })
  .parse({
    messages: values.messages,
    merchants: values.merchants,
    partitions: values.partitions,
    maxOffsets: values["max-offsets"],
    rounds: values.rounds,
    peers: values.peers,
    flinkCheckpointMs: values["flink-checkpoint-ms"],
    flinkMode: values["flink-mode"],
    flinkAlignMs: values["flink-align-ms"],
    sparkStateStore: values["spark-state-store"],
    sluiceWorkers: values["sluice-workers"],
    sluiceParallelism: values["sluice-parallelism"],
    sluiceCpuProf: values["sluice-cpu-prof"],
  });
if (opts.sluiceParallelism > 1 && opts.sluiceWorkers < opts.sluiceParallelism)
  throw new Error("--sluice-parallelism N runs on worker processes: give --sluice-workers N as well");

const env = loadEnv(ZServiceEnv);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" / ");

/** What each engine guarantees in this run, said next to its times. */
function guarantees(engine: Engine): string {
  if (engine === "sluice")
    return (
      `exactly-once: each batch's window state, changed windows (update mode), dedup state, dead letters, progress and checkpoint in one fenced Postgres transaction; ` +
      (opts.sluiceWorkers === 0
        ? "`sluice run --until-caught-up`, one process"
        : `${opts.sluiceWorkers} worker processes, parallelism ${opts.sluiceParallelism}`) +
      `; ${fmt(opts.maxOffsets)} offsets a batch`
    );
  if (engine === "flink")
    return (
      `Flink 1.20 DataStream, parallelism 2, heap state backend (hashmap); ` +
      (opts.flinkAlignMs > 0
        ? `watermark alignment (partitions at most ${opts.flinkAlignMs / 1000} s of event time apart); `
        : "no watermark alignment; ") +
      (opts.flinkCheckpointMs > 0
        ? `checkpoints every ${opts.flinkCheckpointMs} ms (exactly-once state; the sink flushes at each checkpoint: at-least-once idempotent upserts)`
        : "checkpointing OFF: a failure loses the state, nothing is recoverable") +
      `; ${opts.flinkMode === "update" ? "changed windows upserted every second and when final (update)" : "each window written once, when final"}; no dead letters (malformed and late rows are dropped, counted)`
    );
  return (
    `Spark 4.0 Structured Streaming, local[2], 2 shuffle partitions, ${opts.sparkStateStore === "rocksdb" ? "RocksDB" : "HDFS-backed (in memory, a delta file per batch)"} state store; ` +
    `offsets and state checkpointed every micro-batch, foreachBatch upserts of changed windows (update mode; idempotent, so exactly-once in effect); ` +
    `${fmt(opts.maxOffsets)} offsets a micro-batch; no dead letters`
  );
}

const kafka = new Kafka({
  brokers: env.KAFKA_BROKERS,
  clientId: "sluice-bench-peers",
  logLevel: logLevel.NOTHING,
});
const runId = Date.now().toString(36);
const topic = `bench_peers_${runId}`;
const workDir = path.join(REPO_ROOT, ".cache/peers/runs", runId);
await mkdir(workDir, { recursive: true });
const say = (line: string) => console.log(line);
const cores = availableParallelism();
/** ", cpu 41.2 s (machine 88.0 s = 1.66 cores)" for a run, from what was measured. */
const cpuOf = (run: ProcessRun) =>
  (run.processCpuSeconds !== undefined ? `, cpu ${run.processCpuSeconds.toFixed(1)} s` : "") +
  (run.machineCpuSeconds !== undefined
    ? ` (machine ${run.machineCpuSeconds.toFixed(1)} s = ${(run.machineCpuSeconds / run.seconds).toFixed(2)} cores)`
    : "");

if (opts.peers.some((p) => p !== "sluice")) buildPeers(REPO_ROOT, say);
const db = await createScratchDatabase(env.DATABASE_URL);
const { pool } = db;
const jdbc = jdbcFor(db.url);

try {
  say(`load average at start: ${load()}`);
  const w = await produceWorkload(kafka, { topic, ...opts });
  say(
    `produced ${fmt(w.messages)} messages over ${fmt(w.merchants)} merchants to ${topic} (${w.partitions} partitions) in ${w.produceSeconds.toFixed(1)} s; ` +
      `5% duplicates, 1% malformed, 5% out of order, 1% late (40 min–3 h) after the first ${fmt(w.warmup)}`,
  );
  const refCount = await loadReference(pool, kafka, topic);
  const expected = await computeExpected(pool);
  say(
    `expected (SQL over the ${fmt(refCount)} records): ${fmt(expected.windows)} windows; well-formed ${fmt(expected.events)}: ${fmt(expected.accepted)} on time, ${fmt(expected.late)} late, ${fmt(expected.ambiguous)} in between`,
  );
  if (expected.ambiguous > 0)
    throw new Error(
      `${expected.ambiguous} events are neither clearly on time nor clearly late: no single expected result holds for every engine`,
    );
  const ends = Object.fromEntries(
    (
      await pool.query<{ partition: number; high: string }>(
        `SELECT partition, max("offset") + 1 AS high FROM peers_ref GROUP BY partition`,
      )
    ).rows.map((r) => [String(r.partition), Number(r.high)]),
  );
  await createTestUsers(pool, [{ email: BENCH_ACTOR, role: "admin", teams: ["payments-data"] }]);

  type Result = { engine: Engine; round: number; run: ProcessRun; check: SinkCheck | undefined };
  const results: Result[] = [];
  for (let round = 1; round <= opts.rounds; round++) {
    // Rotate who goes first, so no engine always runs on a warmer (or busier) machine.
    const order = opts.peers.map((_, i) => opts.peers[(i + round - 1) % opts.peers.length]!);
    for (const engine of order) {
      const table = `settlements_${engine}_r${round}`;
      const log = path.join(workDir, `${engine}-r${round}.log`);
      let run: ProcessRun;
      if (engine === "sluice") {
        run = await runSluice(
          {
            repoRoot: REPO_ROOT,
            databaseUrl: db.url,
            redisUrl: env.REDIS_URL,
            topic,
            ...opts,
            workers: opts.sluiceWorkers,
            parallelism: opts.sluiceParallelism,
            cpuProfDir: opts.sluiceCpuProf,
          },
          pool,
          {
            name: `peers-sluice-r${round}`,
            table,
            specFile: path.join(workDir, `sluice-r${round}.json`),
            log,
            topicEnds: ends,
          },
        );
      } else {
        await pool.query(createPeerSinkSql(table));
        const common = { brokers: env.KAFKA_BROKERS.join(","), topic, jdbc: jdbc.url, table };
        const args =
          engine === "flink"
            ? {
                ...common,
                parallelism: 2,
                mode: opts.flinkMode,
                "align-ms": opts.flinkAlignMs,
                "checkpoint-ms": opts.flinkCheckpointMs,
                "checkpoint-dir": path.join(workDir, `flink-r${round}`),
                group: `peers-flink-${runId}-r${round}`,
              }
            : {
                ...common,
                "max-offsets": opts.maxOffsets,
                "checkpoint-dir": path.join(workDir, `spark-r${round}`),
                "state-store": opts.sparkStateStore,
              };
        run = await timeProcess("java", javaCommand(REPO_ROOT, engine, args), {
          cwd: peersDir(REPO_ROOT),
          // Spark binds its driver to the loopback address (it would pick the first interface).
          env: { ...process.env, ...jdbc.env, SPARK_LOCAL_IP: "127.0.0.1" },
          log,
        });
      }
      const check = run.exitCode === 0 ? await checkSink(pool, table) : undefined;
      results.push({ engine, round, run, check });
      const verdict = !check
        ? `FAILED (exit ${run.exitCode}; log ${run.log}):\n${tail(run.output)}`
        : isExact(check)
          ? `exact (${fmt(check.rows)} windows)`
          : `WRONG: ${check.missing} missing, ${check.extra} extra, ${check.differing} differing of ${fmt(expected.windows)} windows\n    ${check.examples.join("\n    ")}`;
      say(
        `round ${round} ${engine.padEnd(6)} ${run.seconds.toFixed(1).padStart(6)} s${run.peakMb ? `, peak ${fmt(Math.round(run.peakMb))} MB` : ""}${cpuOf(run)}, load ${load()}: ${verdict}`,
      );
      if (engine === "sluice" && run.exitCode === 0)
        say(`  sluice: ${await sluicePhases(pool, `peers-sluice-r${round}`)}`);
    }
  }

  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length === 0
      ? NaN
      : s.length % 2
        ? s[(s.length - 1) / 2]!
        : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const ok = (r: Result) => r.check !== undefined && isExact(r.check);
  const medianOf = (rs: Result[], f: (r: Result) => number | undefined) => {
    const xs = rs.map(f).filter((x): x is number => x !== undefined);
    return xs.length === rs.length ? median(xs) : undefined;
  };
  say(
    `\nsummary (${fmt(w.messages)} events, ${fmt(w.merchants)} merchants, ${fmt(expected.windows)} windows; load average now ${load()})`,
  );
  say(
    `engine  ${Array.from({ length: opts.rounds }, (_, i) => `round ${i + 1}`.padStart(9)).join(" ")}   median  exact   (medians and ratios over exact runs only)`,
  );
  for (const engine of opts.peers) {
    const mine = results.filter((r) => r.engine === engine);
    say(
      `${engine.padEnd(6)}  ${mine.map((r) => `${r.run.seconds.toFixed(1)} s${ok(r) ? " " : "!"}`.padStart(9)).join(" ")}  ${median(
        mine.filter(ok).map((r) => r.run.seconds),
      )
        .toFixed(1)
        .padStart(5)} s  ${mine.filter(ok).length}/${mine.length}`,
    );
  }
  say(
    `\nCPU (median over rounds; ${cores} cores): the engine's own process, the whole machine during the run, and the`,
  );
  say(`shortest the run could take here if that CPU were spread over every core without a moment idle`);
  for (const engine of opts.peers) {
    const mine = results.filter((r) => r.engine === engine && ok(r));
    const own = medianOf(mine, (r) => r.run.processCpuSeconds);
    const machine = medianOf(mine, (r) => r.run.machineCpuSeconds);
    const wall = median(mine.map((r) => r.run.seconds));
    say(
      `${engine.padEnd(6)}  process ${own === undefined ? "—" : `${own.toFixed(1)} s`}, machine ${machine === undefined ? "—" : `${machine.toFixed(1)} s (${(machine / wall).toFixed(2)} of ${cores} cores busy), at best ${(machine / cores).toFixed(1)} s`}`,
    );
  }
  if (opts.peers.includes("sluice")) {
    for (const peer of opts.peers.filter((p) => p !== "sluice")) {
      // Rounds where both runs were exact: a failed or wrong run's time compares nothing.
      const ratios = results
        .filter((r) => r.engine === "sluice" && ok(r))
        .flatMap((s) => {
          const other = results.find((r) => r.engine === peer && r.round === s.round);
          return other && ok(other) ? [s.run.seconds / other.run.seconds] : [];
        });
      say(
        `sluice ÷ ${peer}: ${ratios.map((r) => r.toFixed(2)).join(", ")} (median ${median(ratios).toFixed(2)})`,
      );
    }
  }
  say("(! = the run's sink was not exact or the run failed: its time is not a valid comparison)");
  say("\nwhat each engine guaranteed in these runs:");
  for (const engine of opts.peers) say(`  ${engine}: ${guarantees(engine)}`);
} finally {
  await db.close();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
}
