// Benchmark: what the event-time temporal join costs (issue #23). The payments ledger enriched with
// its customer's status as of each payment, against the plain ledger over the same topic in the same
// run (alternating, median of the rounds): the ratio is the goal, absolute rates vary by machine. Then
// the state the join keeps while the customer changelog lags the payments by N minutes: the rows
// waiting for the dimension, and the versions kept.
//
//   npx tsx bench/src/join-throughput.ts                      # 100k payments over 500 customers
//   npx tsx bench/src/join-throughput.ts --messages 300000 --lags 2,10,30
//
// Uses DATABASE_URL's server (a scratch database, dropped afterwards) and KAFKA_BROKERS (fresh topics,
// deleted afterwards).
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { Kafka, logLevel } from "kafkajs";
import { z } from "zod";
import { loadEnv, ZServiceEnv } from "@sluice/config";
import { DEFAULT_SIMULATED_START, producePayments, Prng } from "@sluice/producer";
import { parseSpecOrThrow, validateSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import { fmt, rate } from "./format";
import { measurePipeline } from "./measure-pipeline";
import { median } from "./percentile";
import { createScratchDatabase } from "./scratch-database";

const ZOptions = z.object({
  messages: z.coerce.number().int().min(1000).default(100_000),
  customers: z.coerce.number().int().min(10).max(999_999).default(500),
  rounds: z.coerce.number().int().min(1).max(9).default(3),
  lags: z
    .string()
    .default("2,10")
    .transform((s) => s.split(",").map(Number)),
});
const { values } = parseArgs({
  options: {
    messages: { type: "string" },
    customers: { type: "string" },
    rounds: { type: "string" },
    lags: { type: "string" },
  },
});
const opts = ZOptions.parse(values);
const env = loadEnv(ZServiceEnv);
const kafka = new Kafka({ brokers: env.KAFKA_BROKERS, clientId: "sluice-bench", logLevel: logLevel.NOTHING });
const run = Date.now().toString(36);
const paymentsTopic = `bench_join_payments_${run}`;
const topics = [paymentsTopic];
const db = await createScratchDatabase(env.DATABASE_URL);
const PARTITIONS = 3;
// The producer's simulated clock: one event every 10 ms from its default start.
const START = DEFAULT_SIMULATED_START;
const END = START + opts.messages * 10;
const customerId = (n: number) => `cus_${String(n).padStart(6, "0")}`;

/**
 * A customer changelog over the payments' customers: each inserted an hour before the first payment,
 * then changing five times at random moments of the payments' span — only changes up to `END - lagMs`
 * are sent, and each partition's clock is moved to there (a filler entity), so the dimension's
 * watermark stands `lagMs` (plus its 1-minute delay) behind the payments' newest event time.
 */
async function produceChangelog(lagMs: number): Promise<string> {
  const topic = `bench_join_customers_${run}_${lagMs}`;
  topics.push(topic);
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
  await admin.disconnect();
  const rng = Prng.from("join-bench");
  const until = END - lagMs;
  const changes: { partition: number; key: string; value: string }[] = [];
  const statuses = ["active", "suspended", "active", "closed"];
  for (let c = 1; c <= opts.customers; c++) {
    const times = [START - 3_600_000, ...Array.from({ length: 5 }, () => rng.int(START, END))];
    times.forEach((t, version) => {
      if (t > until) return;
      const key = customerId(c);
      changes.push({
        partition: c % 2,
        key,
        value: JSON.stringify({
          customer_id: key,
          status: statuses[rng.int(0, statuses.length - 1)],
          risk_score: rng.int(0, 100),
          op: version === 0 ? "I" : "U",
          changed_at: new Date(t).toISOString(),
          version: version + 1,
        }),
      });
    });
  }
  for (const partition of [0, 1])
    changes.push({
      partition,
      key: "clock",
      value: JSON.stringify({
        customer_id: `clock-${partition}`,
        status: "active",
        risk_score: 0,
        op: "U",
        changed_at: new Date(until).toISOString(),
        version: 1,
      }),
    });
  const producer = kafka.producer();
  await producer.connect();
  for (let i = 0; i < changes.length; i += 5000)
    await producer.send({ topic, messages: changes.slice(i, i + 5000) });
  await producer.disconnect();
  return topic;
}

function ledgerSpec(example: TPipelineSpec, name: string, join?: { topic: string }): TPipelineSpec {
  const checked = validateSpec({
    ...example,
    name,
    source: { kafka: { ...example.source.kafka, topic: paymentsTopic, maxOffsetsPerTrigger: 20_000 } },
    sink: { postgres: { table: name.replaceAll("-", "_") } },
    ...(join
      ? {
          join: {
            dimension: {
              kafka: { topic: join.topic, startingOffsets: "earliest" },
              contract: {
                fields: {
                  customer_id: "string",
                  status: "string",
                  risk_score: "int?",
                  op: "string",
                  changed_at: "timestamp",
                  version: "int",
                },
              },
              key: ["customer_id"],
              eventTime: { column: "changed_at", watermarkDelay: "1m" },
              sequenceBy: "version",
              deleteWhen: "op == 'D'",
            },
            on: { customer_id: "customer_id" },
            fields: { customer_status: "status", customer_risk: "risk_score" },
            waitFor: "2h",
            onMissing: "emit",
          },
        }
      : {}),
  });
  if (!checked.ok) throw new Error(`benchmark spec invalid: ${JSON.stringify(checked.errors)}`);
  return checked.spec;
}

try {
  const produced = await producePayments({
    topic: paymentsTopic,
    kafka,
    count: opts.messages,
    partitions: PARTITIONS,
    customers: opts.customers,
    seed: "join-bench",
    duplicateShare: 0.05,
    outOfOrderShare: 0.05,
    manifest: "counts",
    batchSize: 5000,
    log: () => undefined,
  });
  const total = produced.manifest.counts.messages;
  const ahead = await produceChangelog(-3_600_000); // the dimension an hour ahead: every row joins at once
  console.log(
    `produced ${fmt(total)} payments over ${opts.customers} customers (${PARTITIONS} partitions) and their changelog`,
  );
  const example = parseSpecOrThrow(
    await readFile(new URL("../../demo/pipelines/payments-ledger.yaml", import.meta.url), "utf8"),
  );

  const plain: number[] = [];
  const joined: number[] = [];
  for (let r = 0; r < opts.rounds; r++) {
    const p = await measurePipeline(db.pool, kafka, ledgerSpec(example, `plain-${r}`), total);
    plain.push(rate(total, p.elapsedMs));
    const j = await measurePipeline(
      db.pool,
      kafka,
      ledgerSpec(example, `joined-${r}`, { topic: ahead }),
      total,
    );
    joined.push(rate(total, j.elapsedMs));
    const report = j.batches.reduce((n, b) => n + Number(b.join?.joined ?? 0), 0);
    if (report === 0) throw new Error("the enriched ledger joined no row: the benchmark measures nothing");
  }
  console.log(
    `plain ledger: median ${fmt(median(plain))} msg/s; enriched ledger: median ${fmt(median(joined))} msg/s (${opts.rounds} rounds, alternating)`,
  );
  console.log(`ratio enriched / plain = ${(median(joined) / median(plain)).toFixed(2)}`);

  for (const lagMinutes of opts.lags) {
    const topic = await produceChangelog(lagMinutes * 60_000);
    const m = await measurePipeline(
      db.pool,
      kafka,
      ledgerSpec(example, `lag-${lagMinutes}`, { topic }),
      total,
    );
    const last = m.batches.at(-1)!;
    const j: Record<string, unknown> = last.join ?? {};
    console.log(
      `dimension ${lagMinutes} min behind: ${fmt(Number(j.waiting ?? 0))} rows waiting (${fmt(Number(j.waitingBytes ?? 0) / 1024)} KiB), ` +
        `${fmt(Number(j.versions ?? 0))} versions kept (${fmt(Number(j.versionsBytes ?? 0) / 1024)} KiB); ` +
        `${fmt(rate(total, m.elapsedMs))} msg/s`,
    );
  }
} finally {
  await db.close();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics }).catch(() => undefined);
  await admin.disconnect();
}
