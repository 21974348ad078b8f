// Benchmark: the ledger pipeline end to end (exactly-once commits into Postgres) against the raw
// ceiling (kafkajs reading and JSON-decoding the same topic, nothing else), in one run on one topic.
//
//   npm run bench:engine -w @sluice/bench            # 200k messages, 3 partitions, 20k per batch
//   npx tsx bench/src/engine-ledger.ts --messages 500000 --partitions 6 --max-offsets 50000
//
// Uses DATABASE_URL's server (a fresh scratch database, dropped afterwards) and KAFKA_BROKERS (a
// fresh topic, deleted afterwards). Target (issue 3): pipeline rate ≥ 0.5 × raw rate.
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { Kafka, logLevel } from "kafkajs";
import { z } from "zod";
import { loadEnv, ZServiceEnv } from "@sluice/config";
import { producePayments } from "@sluice/producer";
import { parseSpecOrThrow, validateSpec } from "@sluice/pipeline-spec";
import { cpuBound, nodeCpuMs } from "./cpu-usage";
import { landTopic } from "./landing-ceiling";
import { fmt, rate } from "./format";
import { measurePipeline } from "./measure-pipeline";
import { readRawCeiling } from "./raw-ceiling";
import { createScratchDatabase } from "./scratch-database";

const ZBenchOptions = z.object({
  messages: z.coerce.number().int().min(1000).default(200_000),
  partitions: z.coerce.number().int().min(1).max(64).default(3),
  maxOffsets: z.coerce.number().int().min(100).default(20_000),
  keep: z.boolean().default(false),
});

const { values } = parseArgs({
  options: {
    messages: { type: "string" },
    partitions: { type: "string" },
    "max-offsets": { type: "string" },
    keep: { type: "boolean" },
  },
});
const opts = ZBenchOptions.parse({
  messages: values.messages,
  partitions: values.partitions,
  maxOffsets: values["max-offsets"],
  keep: values.keep,
});
const env = loadEnv(ZServiceEnv);

const kafka = new Kafka({ brokers: env.KAFKA_BROKERS, clientId: "sluice-bench", logLevel: logLevel.NOTHING });
const topic = `bench_ledger_${Date.now().toString(36)}`;
const db = await createScratchDatabase(env.DATABASE_URL);
const { pool } = db;

try {
  // 0. The input: the demo producer's adversarial stream (5% duplicates, 1% malformed, 5% out of order).
  const produced = await producePayments({
    topic,
    kafka,
    count: opts.messages,
    partitions: opts.partitions,
    seed: "bench",
    duplicateShare: 0.05,
    malformedShare: 0.01,
    outOfOrderShare: 0.05,
    manifest: "counts",
    batchSize: 5000,
    log: () => undefined,
  });
  const total = produced.manifest.counts.messages;
  console.log(
    `produced ${fmt(total)} messages to ${topic} (${opts.partitions} partitions) in ${(produced.elapsedMs / 1000).toFixed(1)} s`,
  );

  // (a) The raw ceiling.
  const rawCpu = nodeCpuMs();
  const raw = await readRawCeiling(kafka, topic, total);
  const rawNodeUs = ((nodeCpuMs() - rawCpu) * 1000) / raw.messages;
  const rawRate = rate(raw.messages, raw.elapsedMs);
  console.log(
    `raw kafkajs read + JSON.parse: ${fmt(raw.messages)} messages in ${(raw.elapsedMs / 1000).toFixed(2)} s = ${fmt(rawRate)} msg/s (node CPU ${rawNodeUs.toFixed(1)} µs/msg)`,
  );

  // (a') The landing ceiling: the same topic into Postgres with the simplest loader.
  const landing = await landTopic(kafka, pool, topic, total);
  const landingRate = rate(landing.messages, landing.elapsedMs);
  console.log(
    `landing ceiling (read + parse + bulk insert keyed by event id, at-least-once): ${fmt(landing.messages)} messages in ${(landing.elapsedMs / 1000).toFixed(2)} s = ${fmt(landingRate)} msg/s (${fmt(landing.landed)} rows)`,
  );

  // (b) The ledger pipeline (examples/payments-ledger.yaml) until caught up, exactly-once commits.
  const example = parseSpecOrThrow(
    await readFile(
      new URL("../../packages/pipeline-spec/examples/payments-ledger.yaml", import.meta.url),
      "utf8",
    ),
  );
  const checked = validateSpec({
    ...example,
    source: { kafka: { ...example.source.kafka, topic, maxOffsetsPerTrigger: opts.maxOffsets } },
    sink: { postgres: { table: "bench_ledger" } },
  });
  if (!checked.ok) throw new Error(`benchmark spec invalid: ${JSON.stringify(checked.errors)}`);
  const spec = checked.spec;
  const {
    batches,
    elapsedMs: pipelineMs,
    nodeUsPerMessage: pipelineNodeUs,
    postgresUsPerMessage: pipelinePgUs,
  } = await measurePipeline(pool, kafka, spec, total);
  const input = batches.reduce((n, b) => n + b.inputRows, 0);
  const pipelineRate = rate(input, pipelineMs);
  console.log(
    `ledger pipeline (exactly-once): ${fmt(input)} messages in ${(pipelineMs / 1000).toFixed(2)} s = ${fmt(pipelineRate)} msg/s, ${batches.length} batches of ≤ ${fmt(opts.maxOffsets)}`,
  );

  const phases = { plan: 0, read: 0, process: 0, commit: 0 };
  for (const b of batches)
    for (const k of Object.keys(phases) as (keyof typeof phases)[]) phases[k] += b.durationMs[k];
  const inBatches = Object.values(phases).reduce((a, b) => a + b, 0);
  const share = (ms: number) => `${fmt(ms)} ms (${Math.round((ms * 100) / inBatches)}%)`;
  const ahead = batches.filter((b) => b.preparedAhead).length;
  console.log(
    `  phases: plan ${share(phases.plan)}, read ${share(phases.read)}, process ${share(phases.process)}, commit ${share(phases.commit)}; ` +
      `${ahead} of ${batches.length} batches read and processed while the previous one committed (those phases overlap, so the sum exceeds the wall time)`,
  );
  const o = batches.reduce(
    (acc, b) => ({
      sink: acc.sink + b.outcomes.sink,
      duplicate: acc.duplicate + b.outcomes.duplicate,
      rejected: acc.rejected + b.outcomes.deadLetter + b.outcomes.quarantined,
      late: acc.late + b.outcomes.late,
    }),
    { sink: 0, duplicate: 0, rejected: 0, late: 0 },
  );
  console.log(
    `  CPU: node ${pipelineNodeUs.toFixed(1)} µs/msg, postgres ${pipelinePgUs === null ? "n/a (not on this machine)" : `${pipelinePgUs.toFixed(1)} µs/msg`} (raw read: node ${rawNodeUs.toFixed(1)} µs/msg)`,
  );
  console.log(
    `  outcomes: sink ${fmt(o.sink)}, duplicate ${fmt(o.duplicate)}, dead letter/quarantined ${fmt(o.rejected)}, late ${fmt(o.late)}`,
  );
  if (input !== total) throw new Error(`the pipeline read ${input} messages but ${total} were produced`);

  const ratio = pipelineRate / rawRate;
  console.log(
    `ratio pipeline / raw = ${ratio.toFixed(2)} (target ≥ 0.50: ${ratio >= 0.5 ? "met" : "NOT met"})`,
  );
  console.log(
    `ratio pipeline / landing ceiling = ${(pipelineRate / landingRate).toFixed(2)} (what correctness costs beyond writing the rows at all)`,
  );
  if (pipelinePgUs !== null) console.log(`  ${cpuBound(pipelineNodeUs, pipelinePgUs, rawRate)}`);
} finally {
  await db.close({ keep: opts.keep });
  if (opts.keep) console.log(`kept database ${db.url} and topic ${topic}`);
  else {
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  }
}
