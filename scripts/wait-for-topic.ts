// Waits until a Kafka topic exists (the demo producer creates it), so the quick start does not start
// pipelines that would only retry against a missing topic. Usage: tsx scripts/wait-for-topic.ts TOPIC [SECONDS]
import { setTimeout as sleep } from "node:timers/promises";
import { Kafka, logLevel } from "kafkajs";
import { loadEnv, ZServiceEnv } from "@sluice/config";

const [topic, seconds = "60"] = process.argv.slice(2);
if (!topic) throw new Error("usage: wait-for-topic.ts TOPIC [SECONDS]");
const env = loadEnv(ZServiceEnv);
const admin = new Kafka({
  brokers: env.KAFKA_BROKERS,
  clientId: "sluice-wait-for-topic",
  logLevel: logLevel.NOTHING,
}).admin();
await admin.connect();
const deadline = Date.now() + Number(seconds) * 1000;
try {
  while (!(await admin.listTopics()).includes(topic)) {
    if (Date.now() > deadline) {
      console.error(`topic "${topic}" did not appear within ${seconds} s`);
      process.exitCode = 1;
      break;
    }
    await sleep(500);
  }
} finally {
  await admin.disconnect();
}
