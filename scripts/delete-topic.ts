// Deletes a Kafka topic (the browser tests' own, when they finish). Usage: tsx scripts/delete-topic.ts TOPIC
import { Kafka, logLevel } from "kafkajs";
import { loadEnv, ZServiceEnv } from "@sluice/config";

const [topic] = process.argv.slice(2);
if (!topic) throw new Error("usage: delete-topic.ts TOPIC");
const admin = new Kafka({
  brokers: loadEnv(ZServiceEnv).KAFKA_BROKERS,
  clientId: "sluice-delete-topic",
  logLevel: logLevel.NOTHING,
}).admin();
await admin.connect();
try {
  await admin.deleteTopics({ topics: [topic] });
} finally {
  await admin.disconnect();
}
