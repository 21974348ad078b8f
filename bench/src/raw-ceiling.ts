// The raw ceiling: how fast kafkajs alone can read and JSON-decode a topic on this machine. A plain
// consumer in a group of its own reads every partition from the beginning with eachBatch and
// JSON.parse, and nothing else — no contract, no dedup, no Postgres. It uses the same fetch sizes
// as the engine's Kafka source, so the two measure the same client doing the same reads.
import { randomBytes } from "node:crypto";
import type { Consumer, Kafka } from "kafkajs";

export interface RawResult {
  messages: number;
  decoded: number;
  undecodable: number;
  elapsedMs: number;
}

/** A consumer in a group of its own with the engine source's fetch sizes: what both ceilings read with. */
export function ceilingConsumer(kafka: Kafka, label: string): Consumer {
  return kafka.consumer({
    groupId: `bench.${label}.${randomBytes(4).toString("hex")}`,
    maxWaitTimeInMs: 250,
    maxBytesPerPartition: 4 * 1024 * 1024,
    maxBytes: 32 * 1024 * 1024,
  });
}

/** Read the topic up to `total` messages (the sum of the partitions' high watermarks). */
export async function readRawCeiling(kafka: Kafka, topic: string, total: number): Promise<RawResult> {
  const consumer = ceilingConsumer(kafka, "raw");
  const started = performance.now();
  let messages = 0;
  let decoded = 0;
  let undecodable = 0;
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    partitionsConsumedConcurrently: 4,
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) {
        messages++;
        try {
          if (m.value && typeof JSON.parse(m.value.toString("utf8")) === "object") decoded++;
          else undecodable++;
        } catch {
          undecodable++;
        }
      }
      if (messages >= total) finish();
    },
  });
  await done;
  const elapsedMs = performance.now() - started;
  await consumer.disconnect();
  return { messages, decoded, undecodable, elapsedMs };
}
