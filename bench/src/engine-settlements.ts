// Benchmark: the merchant-settlements pipeline (contract, dedup, filter, 5-minute event-time windows
// in update mode, exactly-once commits of window state and results) against the raw ceiling
// (kafkajs reading and JSON-decoding the same topic), in one run on one topic.
//
//   npm run bench:settlements -w @sluice/bench          # 200k messages, 3 partitions, 20k per batch
//   npx tsx bench/src/engine-settlements.ts --messages 500000 --max-offsets 50000
//
// Uses DATABASE_URL's server (a scratch database, dropped afterwards) and KAFKA_BROKERS (a fresh
// topic, deleted afterwards). Target (issue 4): pipeline rate ≥ 0.4 × raw rate.
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { Kafka, logLevel } from "kafkajs";
import { z } from "zod";
import { loadEnv, ZServiceEnv } from "@sluice/config";
import type { BatchProgress } from "@sluice/engine";
import { producePayments } from "@sluice/producer";
import { parseSpecOrThrow, validateSpec } from "@sluice/pipeline-spec";
import { cpuBound } from "./cpu-usage";
import { landTopic } from "./landing-ceiling";
import { fmt, rate } from "./format";
import { measurePipeline } from "./measure-pipeline";
import { readRawCeiling } from "./raw-ceiling";
import { createScratchDatabase } from "./scratch-database";

const { values } = parseArgs({
  options: {
    messages: { type: "string" },
    partitions: { type: "string" },
    "max-offsets": { type: "string" },
  },
});
const opts = z
  .object({
    messages: z.coerce.number().int().min(1000).default(200_000),
    partitions: z.coerce.number().int().min(1).max(64).default(3),
    maxOffsets: z.coerce.number().int().min(100).default(20_000),
  })
  .parse({ messages: values.messages, partitions: values.partitions, maxOffsets: values["max-offsets"] });
const env = loadEnv(ZServiceEnv);

const kafka = new Kafka({ brokers: env.KAFKA_BROKERS, clientId: "sluice-bench", logLevel: logLevel.NOTHING });
const topic = `bench_settlements_${Date.now().toString(36)}`;
const db = await createScratchDatabase(env.DATABASE_URL);
const { pool } = db;

try {
  // The demo stream with its misbehaviour: duplicates, malformed rows, out-of-order and late events.
  const produced = await producePayments({
    topic,
    kafka,
    count: opts.messages,
    partitions: opts.partitions,
    seed: "bench",
    duplicateShare: 0.05,
    malformedShare: 0.01,
    outOfOrderShare: 0.05,
    lateShare: 0.01,
    lateMinMs: 60_000,
    lateMaxMs: 20 * 60_000,
    manifest: "counts",
    batchSize: 5000,
    log: () => undefined,
  });
  const total = produced.manifest.counts.messages;
  console.log(
    `produced ${fmt(total)} messages to ${topic} (${opts.partitions} partitions) in ${(produced.elapsedMs / 1000).toFixed(1)} s`,
  );

  const raw = await readRawCeiling(kafka, topic, total);
  const rawRate = rate(raw.messages, raw.elapsedMs);
  console.log(
    `raw kafkajs read + JSON.parse: ${fmt(raw.messages)} messages in ${(raw.elapsedMs / 1000).toFixed(2)} s = ${fmt(rawRate)} msg/s`,
  );

  const landing = await landTopic(kafka, pool, topic, total);
  const landingRate = rate(landing.messages, landing.elapsedMs);
  console.log(
    `landing ceiling (read + parse + bulk insert keyed by event id, at-least-once): ${fmt(landing.messages)} messages in ${(landing.elapsedMs / 1000).toFixed(2)} s = ${fmt(landingRate)} msg/s`,
  );

  // packages/pipeline-spec/examples/merchant-settlements.yaml, pointed at the benchmark topic.
  const example = parseSpecOrThrow(
    await readFile(
      new URL("../../packages/pipeline-spec/examples/merchant-settlements.yaml", import.meta.url),
      "utf8",
    ),
  );
  const checked = validateSpec({
    ...example,
    source: { kafka: { ...example.source.kafka, topic, maxOffsetsPerTrigger: opts.maxOffsets } },
  });
  if (!checked.ok) throw new Error(`benchmark spec invalid: ${JSON.stringify(checked.errors)}`);
  const spec = checked.spec;
  const {
    batches,
    elapsedMs: pipelineMs,
    nodeUsPerMessage: nodeUs,
    postgresUsPerMessage: pgUsPerMsg,
  } = await measurePipeline(pool, kafka, spec, total);
  const pgUs = pgUsPerMsg !== null ? `${pgUsPerMsg.toFixed(1)} µs/msg` : "n/a";
  const input = batches.reduce((n, b) => n + b.inputRows, 0);
  const pipelineRate = rate(input, pipelineMs);
  console.log(
    `merchant-settlements (dedup + 5m windows, update, exactly-once): ${fmt(input)} messages in ${(pipelineMs / 1000).toFixed(2)} s = ${fmt(pipelineRate)} msg/s, ${batches.length} batches`,
  );

  const phases = { plan: 0, read: 0, process: 0, commit: 0 };
  for (const b of batches)
    for (const k of Object.keys(phases) as (keyof typeof phases)[]) phases[k] += b.durationMs[k];
  const inBatches = Object.values(phases).reduce((a, b) => a + b, 0);
  const share = (ms: number) => `${fmt(ms)} ms (${Math.round((ms * 100) / inBatches)}%)`;
  console.log(
    `  phases: plan ${share(phases.plan)}, read ${share(phases.read)}, process (incl. windows) ${share(phases.process)}, commit ${share(phases.commit)}; CPU node ${nodeUs.toFixed(1)} µs/msg, postgres ${pgUs}`,
  );
  const sum = (f: (b: BatchProgress) => number) => fmt(batches.reduce((s, b) => s + f(b), 0));
  console.log(
    `  window operator: ${sum((b) => Number(b.operator?.prepareMs ?? 0))} ms folding (${sum((b) => Number(b.operator?.foldMs ?? 0))} ms) and reading state (in process), ${sum((b) => Number(b.operator?.writeMs ?? 0))} ms writing state and results (in commit)`,
  );
  const windows = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM merchant_settlement_5m`);
  console.log(
    `  outcomes: sink ${sum((b) => b.outcomes.sink)}, duplicate ${sum((b) => b.outcomes.duplicate)}, filtered ${sum((b) => b.outcomes.filtered)}, late ${sum((b) => b.outcomes.late)}; ` +
      `${fmt(windows.rows[0]!.n)} windows written; state after the last batch ${fmt(batches.at(-1)?.stateRows ?? 0)} rows / ${fmt(batches.at(-1)?.stateBytes ?? 0)} bytes`,
  );
  if (input !== total) throw new Error(`the pipeline read ${input} messages but ${total} were produced`);
  const ratio = pipelineRate / rawRate;
  console.log(
    `ratio pipeline / raw = ${ratio.toFixed(2)} (target ≥ 0.40: ${ratio >= 0.4 ? "met" : "NOT met"})`,
  );
  console.log(
    `ratio pipeline / landing ceiling = ${(pipelineRate / landingRate).toFixed(2)} (what correctness costs beyond writing the rows at all)`,
  );
  if (pgUsPerMsg !== null) console.log(`  ${cpuBound(nodeUs, pgUsPerMsg, rawRate)}`);
} finally {
  await db.close();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
}
