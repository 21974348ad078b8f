// Exit 0 if a Kafka broker at the given brokers answers a metadata request, else 1.
// Usage: node scripts/lib/kafka-ready.mjs [host:port,...]   (default: $KAFKA_BROKERS or 127.0.0.1:9092)
// A metadata answer (not just an open port) is what tells a Kafka broker apart from any other
// process on the port, and it is exactly what kafkajs needs before the app can use the broker.
import { Kafka, logLevel } from "kafkajs";

const brokers = (process.argv[2] ?? process.env.KAFKA_BROKERS ?? "127.0.0.1:9092")
  .split(",")
  .map((b) => b.trim())
  .filter(Boolean);
const timeoutMs = Number(process.env.SLUICE_KAFKA_READY_TIMEOUT_MS ?? 5000);

// A hard stop: kafkajs' own timeouts apply per request, and a peer that accepts the connection but
// never answers (any non-Kafka server) must not keep the caller waiting.
const timer = setTimeout(() => {
  console.error(`no Kafka metadata answer from ${brokers.join(",")} within ${timeoutMs} ms`);
  process.exit(1);
}, timeoutMs);

const admin = new Kafka({
  clientId: "sluice-services-check",
  brokers,
  connectionTimeout: 1000,
  requestTimeout: 3000,
  retry: { retries: 0 },
  logLevel: logLevel.NOTHING,
}).admin();

try {
  await admin.connect();
  const cluster = await admin.describeCluster();
  const topics = await admin.listTopics();
  const userTopics = topics.filter((t) => !t.startsWith("__"));
  console.log(
    `cluster ${cluster.clusterId}, ${cluster.brokers.length} broker(s), ${userTopics.length} topic(s)`,
  );
  clearTimeout(timer);
  await admin.disconnect();
  process.exit(0);
} catch (err) {
  console.error(`no Kafka metadata answer from ${brokers.join(",")}: ${err?.message ?? err}`);
  process.exit(1);
}
