// How both ceilings read: a plain kafkajs consumer in a group of its own, with the engine source's
// fetch sizes (so they measure the same client doing the same reads), eachBatch over every partition
// from the beginning until `total` messages were seen.
import { randomBytes } from "node:crypto";
import type { Kafka, KafkaMessage } from "kafkajs";

/** Hands each fetched batch's messages to `onBatch` (awaited; a throw ends the read with it); resolves with the elapsed ms. */
export async function readTopic(
  kafka: Kafka,
  label: string,
  topic: string,
  total: number,
  onBatch: (messages: KafkaMessage[]) => void | Promise<void>,
): Promise<number> {
  const consumer = kafka.consumer({
    groupId: `bench.${label}.${randomBytes(4).toString("hex")}`,
    maxWaitTimeInMs: 250,
    maxBytesPerPartition: 4 * 1024 * 1024,
    maxBytes: 32 * 1024 * 1024,
  });
  const started = performance.now();
  let seen = 0;
  let finish: () => void = () => undefined;
  let fail: (err: unknown) => void = () => undefined;
  const done = new Promise<void>((resolve, reject) => ((finish = resolve), (fail = reject)));
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: 4,
      eachBatch: async ({ batch }) => {
        try {
          await onBatch(batch.messages);
        } catch (err) {
          fail(err);
        }
        seen += batch.messages.length;
        if (seen >= total) finish();
      },
    });
    await done;
    return performance.now() - started;
  } finally {
    await consumer.disconnect();
  }
}
