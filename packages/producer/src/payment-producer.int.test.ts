// Against the real broker: what lands in Kafka is exactly what the manifest says, keyed and ordered
// per merchant, and a seed reproduces it.
import { uniqueName, testServices } from "@sluice/testing";
import type { Kafka, KafkaMessage } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKafka, deleteTopic, ensureTopic } from "./kafka-output";
import { decodePaymentEvent } from "./payment-events";
import { PaymentProducer, producePayments } from "./payment-producer";
import { PaymentStream } from "./payment-stream";

interface Read {
  partition: number;
  key: string;
  value: Buffer;
}

/** Read every message of `topic` from the beginning until `expected` have arrived. */
async function readAll(kafka: Kafka, topic: string, expected: number): Promise<Read[]> {
  const consumer = kafka.consumer({ groupId: uniqueName("producer_it") });
  const out: Read[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages as KafkaMessage[]) {
          out.push({
            partition: batch.partition,
            key: m.key?.toString() ?? "",
            value: m.value ?? Buffer.alloc(0),
          });
        }
        if (out.length >= expected) resolve();
      },
    });
    await Promise.race([
      done,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`read ${out.length}/${expected}`)), 90_000),
      ),
    ]);
    // Give a straggler (more than expected would be a bug) a moment to show up.
    await new Promise((r) => setTimeout(r, 1000));
    return out;
  } finally {
    await consumer.disconnect();
  }
}

describe("PaymentProducer against Kafka", () => {
  const kafka = createKafka({ brokers: testServices.kafkaBrokers, clientId: "producer-int-test" });
  const topics: string[] = [];
  const topic = (label: string) => {
    const t = uniqueName(`producer_${label}`);
    topics.push(t);
    return t;
  };

  beforeAll(async () => {
    // The broker may be restarting briefly (another test suite); wait until it answers.
    const admin = kafka.admin();
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.connect();
        await admin.listTopics();
        break;
      } catch (e) {
        if (attempt >= 30) throw e;
        await new Promise((r) => setTimeout(r, 2000));
      }
    }
    await admin.disconnect();
  });

  afterAll(async () => {
    for (const t of topics) await deleteTopic(kafka, t).catch(() => undefined);
  });

  it("ensureTopic is idempotent", async () => {
    const t = topic("ensure");
    expect(await ensureTopic(kafka, t, { partitions: 3 })).toEqual({ created: true, partitions: 3 });
    expect(await ensureTopic(kafka, t, { partitions: 6 })).toEqual({ created: false, partitions: 3 });
  });

  it("produce(5000): the topic holds exactly the manifest, keyed by merchant, in stream order per merchant", async () => {
    const t = topic("produce");
    const options = {
      seed: 2024,
      merchants: 300,
      duplicateShare: 0.05,
      lateShare: 0.02,
      outOfOrderShare: 0.05,
      malformedShare: 0.01,
    };
    const result = await producePayments({
      ...options,
      kafka,
      topic: t,
      count: 5000,
      batchSize: 700,
      partitions: 6,
    });
    const { manifest } = result;
    expect(result.sent).toBe(5000);
    expect(manifest.counts.messages).toBe(5000);

    const read = await readAll(kafka, t, 5000);
    expect(read).toHaveLength(5000);

    // Well-formed ids read, with how many times each was read, equal the manifest's ids and copies.
    const copiesRead = new Map<string, number>();
    const malformedRead: string[] = [];
    for (const r of read) {
      const decoded = decodePaymentEvent(r.value);
      if (!decoded.ok) {
        malformedRead.push(r.value.toString("base64"));
        continue;
      }
      expect(r.key).toBe(decoded.event.merchant_id);
      copiesRead.set(decoded.event.event_id, (copiesRead.get(decoded.event.event_id) ?? 0) + 1);
    }
    expect(new Set(copiesRead.keys())).toEqual(new Set(manifest.eventIds));
    expect(Object.fromEntries(copiesRead)).toEqual(
      Object.fromEntries([...manifest.events!.values()].map((e) => [e.eventId, e.copies])),
    );
    expect([...copiesRead.values()].reduce((a, b) => a + b, 0)).toBe(
      manifest.counts.events + manifest.counts.duplicates,
    );
    expect(manifest.counts.duplicates).toBeGreaterThan(0);
    expect(malformedRead.sort()).toEqual(manifest.malformed!.map((m) => m.value.toString("base64")).sort());

    // More than one partition used; each merchant in exactly one.
    const partitionsOfKey = new Map<string, Set<number>>();
    for (const r of read)
      partitionsOfKey.set(r.key, (partitionsOfKey.get(r.key) ?? new Set()).add(r.partition));
    expect(new Set(read.map((r) => r.partition)).size).toBeGreaterThan(1);
    for (const ps of partitionsOfKey.values()) expect(ps.size).toBe(1);

    // The seed reproduces the stream, and Kafka kept each merchant's messages in stream order.
    const replay = new PaymentStream(options).take(5000);
    const byKey = (ms: { key: string; value: Buffer }[]) => {
      const m = new Map<string, string[]>();
      for (const x of ms) m.set(x.key, [...(m.get(x.key) ?? []), x.value.toString("base64")]);
      return m;
    };
    expect(byKey(read)).toEqual(byKey(replay));
  });

  it("run(): paced until aborted, then flushed; the manifest matches the topic", async () => {
    const t = topic("run");
    const producer = new PaymentProducer({
      kafka,
      topic: t,
      seed: 7,
      outOfOrderShare: 0.3,
      duplicateShare: 0.1,
      log: () => undefined,
    });
    await producer.ensureTopic(4);
    const controller = new AbortController();
    const progress: number[] = [];
    setTimeout(() => controller.abort(), 2000);
    const result = await producer.run({
      ratePerSecond: 400,
      signal: controller.signal,
      progressIntervalMs: 500,
      onProgress: (s) => progress.push(s.sent),
    });
    await producer.disconnect();
    expect(result.aborted).toBe(true);
    expect(result.sent).toBeGreaterThan(300);
    expect(result.sent).toBeLessThan(1400);
    expect(progress.length).toBeGreaterThan(1);

    const read = await readAll(kafka, t, result.sent);
    expect(read).toHaveLength(result.sent);
    const ids = new Set(
      read.map((r) => (decodePaymentEvent(r.value) as { event: { event_id: string } }).event.event_id),
    );
    expect(ids).toEqual(new Set(result.manifest.eventIds));
    // The flush sent every event held back for reordering: per-merchant seqs are gapless.
    const seqs = new Map<string, number[]>();
    for (const e of result.manifest.events!.values()) seqs.set(e.key, [...(seqs.get(e.key) ?? []), e.seq]);
    for (const list of seqs.values()) expect(list.sort((a, b) => a - b)).toEqual(list.map((_, i) => i + 1));
  });
});
