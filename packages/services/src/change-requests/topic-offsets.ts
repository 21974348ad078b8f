// Where a topic's partitions begin and end, and which offset a point in time maps to: what a
// checkpoint reset is resolved against. The kafkajs admin client answers (offsets-for-times is
// `fetchTopicOffsetsByTimestamp`: the first offset whose timestamp is at or after the time, or the
// log end when there is none).
import type { Kafka } from "kafkajs";

export interface TPartitionBounds {
  partition: number;
  /** The log start: older offsets were removed by retention. */
  low: number;
  /** The log end: the offset the next event will get. */
  high: number;
}

export interface TTopicOffsets {
  bounds(topic: string): Promise<TPartitionBounds[]>;
  forTimestamp(topic: string, at: Date): Promise<Record<number, number>>;
}

export function kafkaTopicOffsets(kafka: Kafka): TTopicOffsets {
  const withAdmin = async <T>(fn: (admin: ReturnType<Kafka["admin"]>) => Promise<T>): Promise<T> => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      return await fn(admin);
    } finally {
      await admin.disconnect();
    }
  };
  return {
    bounds: (topic) =>
      withAdmin(async (admin) =>
        (await admin.fetchTopicOffsets(topic))
          .map((p) => ({ partition: p.partition, low: Number(p.low), high: Number(p.high) }))
          .sort((a, b) => a.partition - b.partition),
      ),
    forTimestamp: (topic, at) =>
      withAdmin(async (admin) =>
        Object.fromEntries(
          (await admin.fetchTopicOffsetsByTimestamp(topic, at.getTime())).map((p) => [
            p.partition,
            Number(p.offset),
          ]),
        ),
      ),
  };
}
