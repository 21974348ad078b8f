// The raw ceiling: how fast kafkajs alone can read and JSON-decode a topic on this machine — every
// value JSON.parse'd and nothing else: no contract, no dedup, no Postgres.
import type { Kafka } from "kafkajs";
import { readTopic } from "./read-topic";

export interface RawResult {
  messages: number;
  decoded: number;
  undecodable: number;
  elapsedMs: number;
}

/** Read the topic up to `total` messages (the sum of the partitions' high watermarks). */
export async function readRawCeiling(kafka: Kafka, topic: string, total: number): Promise<RawResult> {
  let messages = 0;
  let decoded = 0;
  let undecodable = 0;
  const elapsedMs = await readTopic(kafka, "raw", topic, total, (batch) => {
    for (const m of batch) {
      messages++;
      try {
        if (m.value && typeof JSON.parse(m.value.toString("utf8")) === "object") decoded++;
        else undecodable++;
      } catch {
        undecodable++;
      }
    }
  });
  return { messages, decoded, undecodable, elapsedMs };
}
