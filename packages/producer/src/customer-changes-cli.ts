// The customer change feed for the live demo: `tsx packages/producer/src/customer-changes-cli.ts
// --topic customer-changes --rate 5` sends changes (changed_at = now) until SIGINT/SIGTERM.
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { loadEnv, ZServiceEnv } from "@sluice/config";
import { realClock } from "./clock";
import { customerChanges, DEMO_CHANGE_FEED } from "./customer-changes";
import { createKafka, ensureTopic } from "./kafka-output";

const { values } = parseArgs({
  options: {
    topic: { type: "string", default: "customer-changes" },
    rate: { type: "string", default: String(DEMO_CHANGE_FEED.ratePerSecond) },
    customers: { type: "string", default: String(DEMO_CHANGE_FEED.customers) },
    seed: { type: "string", default: "7" },
    shuffle: { type: "string", default: String(DEMO_CHANGE_FEED.shuffleShare) },
    duplicates: { type: "string", default: String(DEMO_CHANGE_FEED.duplicateShare) },
  },
});
const rate = Number(values.rate);
if (!(rate > 0))
  throw new Error(`--rate must be a positive number of changes per second, got ${values.rate}`);
const kafka = createKafka({
  brokers: loadEnv(ZServiceEnv).KAFKA_BROKERS,
  clientId: "sluice-customer-changes",
});
await ensureTopic(kafka, values.topic, { partitions: 3 });
const producer = kafka.producer();
await producer.connect();
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => (stopping = true));
const feed = customerChanges({
  changes: Infinity,
  seed: values.seed,
  customers: Number(values.customers),
  shuffleShare: Number(values.shuffle),
  duplicateShare: Number(values.duplicates),
  clock: realClock(),
});
let sent = 0;
const started = Date.now();
while (!stopping) {
  const due = Math.floor(((Date.now() - started) * rate) / 1000) - sent;
  const messages = [];
  for (let i = 0; i < due; i++) {
    const c = feed.next().value!;
    messages.push({ key: c.customer_id, value: JSON.stringify(c) });
  }
  if (messages.length > 0) {
    await producer.send({ topic: values.topic, messages });
    sent += messages.length;
  }
  await sleep(200);
}
await producer.disconnect();
console.log(`sent ${sent} customer changes to ${values.topic}`);
