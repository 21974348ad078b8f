// kafkajs 2.2.4 against the broker scripts/services.sh runs (Kafka 3.9.1, pinned in
// scripts/kafka/pom.xml): every client call Sluice relies on, end to end. If the broker pin moves,
// this file says whether kafkajs still speaks its protocol (Kafka 4.x removed versions it uses).
import { testServices, uniqueName } from "@sluice/testing";
import { Kafka, logLevel, Partitioners, type Consumer, type KafkaMessage, type Producer } from "kafkajs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

const kafka = new Kafka({
  clientId: "sluice-kafka-compat",
  brokers: testServices.kafkaBrokers,
  // Thrown errors carry the cause; kafkajs' own logging would only add the retries it expects
  // (coordinator not yet available on a fresh broker, the deliberate duplicate create below).
  logLevel: logLevel.NOTHING,
});
const admin = kafka.admin();

// What each test made, removed after it whatever its outcome.
let topics: string[] = [];
let groups: string[] = [];
let clients: Array<Producer | Consumer> = [];

interface Received {
  partition: number;
  offset: number;
  key: string;
  value: string;
}

beforeAll(async () => {
  await admin.connect();
});

afterEach(async () => {
  await Promise.all(clients.map((c) => c.disconnect()));
  if (groups.length) await admin.deleteGroups(groups).catch(() => undefined);
  if (topics.length) await admin.deleteTopics({ topics, timeout: 10_000 });
  topics = [];
  groups = [];
  clients = [];
});

afterAll(async () => {
  await admin.disconnect();
});

async function createTopic(): Promise<string> {
  const topic = uniqueName("compat");
  const created = await admin.createTopics({
    topics: [{ topic, numPartitions: 3, replicationFactor: 1 }],
    waitForLeaders: true,
  });
  expect(created).toBe(true);
  topics.push(topic);
  return topic;
}

async function producer(): Promise<Producer> {
  const p = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  clients.push(p);
  await p.connect();
  return p;
}

/** Produce `count` messages to one partition, keyed `p<partition>-<i>`. */
async function produce(
  p: Producer,
  topic: string,
  partition: number,
  count: number,
  from = 0,
  timestamp?: number,
) {
  await p.send({
    topic,
    messages: Array.from({ length: count }, (_, j) => {
      const i = from + j;
      return {
        partition,
        key: `p${partition}-${i}`,
        value: JSON.stringify({ partition, i }),
        ...(timestamp === undefined ? {} : { timestamp: String(timestamp + j * 1000) }),
      };
    }),
  });
}

/** A consumer in a fresh group (unless given one) that records everything it receives. */
async function consumer(topic: string, groupId = uniqueName("compat_group"), autoCommit = true) {
  const c = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  clients.push(c);
  if (!groups.includes(groupId)) groups.push(groupId);
  await c.connect();
  await c.subscribe({ topic, fromBeginning: true });
  const received: Received[] = [];
  await c.run({
    autoCommit,
    eachMessage: async ({ partition, message }: { partition: number; message: KafkaMessage }) => {
      received.push({
        partition,
        offset: Number(message.offset),
        key: message.key?.toString() ?? "",
        value: message.value?.toString() ?? "",
      });
    },
  });
  return { consumer: c, groupId, received };
}

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const offsetsOf = (received: Received[], partition: number) =>
  received.filter((r) => r.partition === partition).map((r) => r.offset);

describe("kafkajs 2.2.4 against the local Kafka broker", () => {
  it("creates a 3-partition topic, describes it and deletes it", async () => {
    const topic = await createTopic();

    expect(await admin.listTopics()).toContain(topic);
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    const partitions = metadata.topics[0]!.partitions;
    expect(partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2]);
    for (const p of partitions) expect(p.leader).toBeGreaterThanOrEqual(0);
    // Creating it again is a no-op the broker reports, not an error.
    expect(await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] })).toBe(false);

    await admin.deleteTopics({ topics: [topic], timeout: 10_000 });
    topics = [];
    // Deletion is asynchronous on the broker; it must show within a few seconds.
    let listed = await admin.listTopics();
    for (let i = 0; i < 50 && listed.includes(topic); i++) {
      await new Promise((r) => setTimeout(r, 100));
      listed = await admin.listTopics();
    }
    expect(listed).not.toContain(topic);
  });

  it("produces to every partition and consumes it all through a consumer group", async () => {
    const topic = await createTopic();
    const p = await producer();
    for (const partition of [0, 1, 2]) await produce(p, topic, partition, 3);

    const { received } = await consumer(topic);
    await until(() => received.length >= 9, "9 messages");

    expect(received).toHaveLength(9);
    for (const partition of [0, 1, 2]) {
      expect(offsetsOf(received, partition)).toEqual([0, 1, 2]);
      const mine = received.filter((r) => r.partition === partition);
      expect(mine.map((r) => r.key)).toEqual([0, 1, 2].map((i) => `p${partition}-${i}`));
      expect(mine.map((r) => JSON.parse(r.value))).toEqual([0, 1, 2].map((i) => ({ partition, i })));
    }
  });

  it("commits offsets, fetches them back, and a new member of the group resumes from them", async () => {
    const topic = await createTopic();
    const p = await producer();
    await produce(p, topic, 0, 5);
    await produce(p, topic, 1, 3);

    const first = await consumer(topic, undefined, false);
    await until(() => first.received.length >= 8, "8 messages");
    // The next offset to read, as Kafka expects: partition 0 read up to 2, partition 1 fully.
    await first.consumer.commitOffsets([
      { topic, partition: 0, offset: "3" },
      { topic, partition: 1, offset: "3" },
    ]);
    await first.consumer.disconnect();

    const [committed] = await admin.fetchOffsets({ groupId: first.groupId, topics: [topic] });
    const byPartition = Object.fromEntries(committed!.partitions.map((x) => [x.partition, x.offset]));
    expect(byPartition).toEqual({ 0: "3", 1: "3", 2: "-1" });

    await produce(p, topic, 1, 2, 3);
    const second = await consumer(topic, first.groupId, false);
    await until(() => second.received.length >= 4, "4 messages after the committed offsets");
    await new Promise((r) => setTimeout(r, 500)); // nothing else may arrive
    expect(offsetsOf(second.received, 0)).toEqual([3, 4]);
    expect(offsetsOf(second.received, 1)).toEqual([3, 4]);
    expect(offsetsOf(second.received, 2)).toEqual([]);
  });

  it("lists each partition's low and high offsets, and finds offsets by timestamp", async () => {
    const topic = await createTopic();
    const p = await producer();
    const t0 = Date.now() - 60_000;
    await produce(p, topic, 0, 4, 0, t0); // timestamps t0, t0+1s, t0+2s, t0+3s
    await produce(p, topic, 1, 2);

    const offsets = await admin.fetchTopicOffsets(topic);
    const summary = offsets
      .map((o) => ({ partition: o.partition, low: o.low, high: o.high }))
      .sort((a, b) => a.partition - b.partition);
    expect(summary).toEqual([
      { partition: 0, low: "0", high: "4" },
      { partition: 1, low: "0", high: "2" },
      { partition: 2, low: "0", high: "0" },
    ]);

    const byTime = await admin.fetchTopicOffsetsByTimestamp(topic, t0 + 1_500);
    expect(byTime.find((o) => o.partition === 0)?.offset).toBe("2");
  });

  it("seeks a partition to a given offset, before and after its first fetch", async () => {
    const topic = await createTopic();
    const p = await producer();
    await produce(p, topic, 1, 10);

    const { consumer: c, received } = await consumer(topic);
    // Right after run(): applied once the group assigns the partition, before anything is read.
    c.seek({ topic, partition: 1, offset: "6" });
    await until(() => received.length >= 4, "offsets 6..9");
    await new Promise((r) => setTimeout(r, 300));
    expect(offsetsOf(received, 1)).toEqual([6, 7, 8, 9]);

    // On a partition being read: back to an earlier offset, the way a batch is re-read.
    received.length = 0;
    c.seek({ topic, partition: 1, offset: "2" });
    await until(() => received.length >= 8, "offsets 2..9 again");
    await new Promise((r) => setTimeout(r, 300));
    expect(offsetsOf(received, 1)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect(received.find((r) => r.offset === 2)?.key).toBe("p1-2");
  });
});
