// Proves the source reads exactly the planned offset ranges from a real broker — no message before
// `from`, none at or after `to`, across partitions, including re-reading a range backwards (what a
// re-run of a planned-but-uncommitted batch does).
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testServices, uniqueName } from "@sluice/testing";
import { KafkaSource } from "./kafka-source";

const topic = uniqueName("source_it");
const kafka = new Kafka({
  brokers: testServices.kafkaBrokers,
  clientId: "source-it",
  logLevel: logLevel.NOTHING,
});
const admin = kafka.admin();
let source: KafkaSource;

beforeAll(async () => {
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
  const producer = kafka.producer();
  await producer.connect();
  for (const partition of [0, 1, 2]) {
    const messages = Array.from({ length: 100 }, (_, i) => ({
      partition,
      key: `k${i}`,
      value: `p${partition}-o${i}`,
    }));
    await producer.send({ topic, messages, acks: -1 });
  }
  await producer.disconnect();
  source = new KafkaSource({ kafka, topic, groupPrefix: uniqueName("grp"), readTimeoutMs: 20_000 });
});

afterAll(async () => {
  await source.close();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
});

const values = (records: { value: Buffer | null }[]) => records.map((r) => r.value!.toString());

describe("KafkaSource on a real broker", () => {
  it("reports the retained offsets of every partition", async () => {
    expect(await source.partitionOffsets()).toEqual(
      [0, 1, 2].map((partition) => ({ partition, low: 0, high: 100 })),
    );
  });

  it("reads exactly the planned ranges of several partitions", async () => {
    const records = await source.read([
      { partition: 0, from: 10, to: 15 },
      { partition: 2, from: 95, to: 100 },
      { partition: 1, from: 3, to: 3 },
    ]);
    expect(values(records)).toEqual([
      ...[10, 11, 12, 13, 14].map((o) => `p0-o${o}`),
      ...[95, 96, 97, 98, 99].map((o) => `p2-o${o}`),
    ]);
    expect(records.every((r) => r.timestamp > 0)).toBe(true);
  });

  it("re-reads an earlier range after a later one (a batch re-run)", async () => {
    await source.read([{ partition: 1, from: 50, to: 60 }]);
    const again = await source.read([{ partition: 1, from: 0, to: 4 }]);
    expect(values(again)).toEqual(["p1-o0", "p1-o1", "p1-o2", "p1-o3"]);
  });

  it("reads consecutive ranges back to back with nothing lost or repeated", async () => {
    const seen: string[] = [];
    for (let from = 0; from < 100; from += 30) {
      seen.push(...values(await source.read([{ partition: 0, from, to: Math.min(100, from + 30) }])));
    }
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => `p0-o${i}`));
  });

  it("a range that starts inside the read-ahead but ends past it gets the buffered records and then fresh ones", async () => {
    const own = new KafkaSource({ kafka, topic, groupPrefix: uniqueName("grp"), readTimeoutMs: 20_000 });
    try {
      expect(values(await own.read([{ partition: 2, from: 0, to: 40 }]))).toEqual(
        Array.from({ length: 40 }, (_, i) => `p2-o${i}`),
      );
      // Give the read-ahead time to buffer the rest of the partition, then append to it.
      await new Promise((r) => setTimeout(r, 500));
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({
        topic,
        messages: Array.from({ length: 20 }, (_, i) => ({ partition: 2, value: `p2-o${100 + i}` })),
        acks: -1,
      });
      await producer.disconnect();
      expect(values(await own.read([{ partition: 2, from: 40, to: 120 }]))).toEqual(
        Array.from({ length: 80 }, (_, i) => `p2-o${40 + i}`),
      );
    } finally {
      await own.close();
    }
  });

  it("drops the read-ahead when the next range does not start where the last one ended", async () => {
    const own = new KafkaSource({ kafka, topic, groupPrefix: uniqueName("grp"), readTimeoutMs: 20_000 });
    try {
      await own.read([{ partition: 1, from: 0, to: 10 }]);
      await new Promise((r) => setTimeout(r, 300));
      expect(values(await own.read([{ partition: 1, from: 20, to: 25 }]))).toEqual([
        "p1-o20",
        "p1-o21",
        "p1-o22",
        "p1-o23",
        "p1-o24",
      ]);
      expect(values(await own.read([{ partition: 1, from: 5, to: 8 }]))).toEqual(["p1-o5", "p1-o6", "p1-o7"]);
    } finally {
      await own.close();
    }
  });
});
