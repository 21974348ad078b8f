// Kafka plumbing: a client configured for this producer, an idempotent topic helper, and the mapping
// from stream messages to Kafka records (key = merchant_id, value = the exact bytes).
import { setTimeout as sleep } from "node:timers/promises";
import { Kafka, logLevel, type logCreator, type Message } from "kafkajs";
import { retryDelayMs } from "@sluice/retry-policy";
import type { StreamMessage } from "./payment-stream";

export const DEFAULT_BROKERS = ["127.0.0.1:9092"];
export const DEFAULT_PARTITIONS = 6;

export interface KafkaClientOptions {
  brokers?: string[];
  clientId?: string;
  /** kafkajs log level; default ERROR (kafkajs is chatty at INFO). */
  logLevel?: logLevel;
  /** Route kafkajs logs here as one short line each, instead of kafkajs's JSON on the console. */
  kafkaLog?: (line: string) => void;
}

const LEVEL_NAMES: Record<number, string> = { 1: "ERROR", 2: "WARN", 4: "INFO", 5: "DEBUG" };

/** kafkajs log entries as `kafka ERROR [Connection] Connection error: ... (broker 127.0.0.1:9092)`. */
function compactLogCreator(write: (line: string) => void): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      const { message, broker } = log as { message?: string; broker?: string };
      write(
        `kafka ${LEVEL_NAMES[level] ?? level} [${namespace}] ${message ?? ""}${broker ? ` (broker ${broker})` : ""}`,
      );
    };
}

export function createKafka(options: KafkaClientOptions = {}): Kafka {
  return new Kafka({
    clientId: options.clientId ?? "sluice-producer",
    brokers: options.brokers ?? DEFAULT_BROKERS,
    logLevel: options.logLevel ?? logLevel.ERROR,
    ...(options.kafkaLog ? { logCreator: compactLogCreator(options.kafkaLog) } : {}),
    // Ride out a broker restart of up to about a minute (300 ms doubling to 30 s, 8 retries).
    retry: { initialRetryTime: 300, maxRetryTime: 30_000, retries: 8 },
  });
}

const TOPIC_RE = /^[A-Za-z0-9._-]{1,249}$/;

export function isValidTopicName(topic: string): boolean {
  return TOPIC_RE.test(topic) && topic !== "." && topic !== "..";
}

export interface EnsureTopicOptions {
  /** Default 6. Ignored when the topic already exists (its partition count is reported instead). */
  partitions?: number;
  /** Default 1 (the demo runs one broker). */
  replicationFactor?: number;
}

/**
 * Create the topic if it does not exist; safe to call repeatedly and concurrently.
 * Returns whether it was created and how many partitions it has now.
 */
export async function ensureTopic(
  kafka: Kafka,
  topic: string,
  options: EnsureTopicOptions = {},
): Promise<{ created: boolean; partitions: number }> {
  if (!isValidTopicName(topic)) throw new RangeError(`invalid Kafka topic name: ${JSON.stringify(topic)}`);
  // kafkajs' createTopics({ waitForLeaders }) retries only LEADER_NOT_AVAILABLE; a broker that has not
  // yet propagated the new topic answers UNKNOWN_TOPIC_OR_PARTITION (retriable) and the call throws
  // (tulios/kafkajs#1222). Seen on a fresh broker under load: the quick start's producer died at start.
  // Retry what kafkajs marks retriable, for up to ~15 s; a second pass finds the topic and creates nothing.
  for (let attempt = 1; ; attempt++) {
    try {
      return await createIfMissing(kafka, topic, options);
    } catch (err) {
      if (!(err as { retriable?: boolean }).retriable || attempt >= 10) throw err;
      await sleep(retryDelayMs({ baseMs: 250, capMs: 3000 }, attempt));
    }
  }
}

async function createIfMissing(
  kafka: Kafka,
  topic: string,
  options: EnsureTopicOptions,
): Promise<{ created: boolean; partitions: number }> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    // Look first: kafkajs would handle "already exists" (resolving false) but log it as an ERROR.
    // A concurrent creator between the two calls is still fine, just noisy.
    const created =
      !(await admin.listTopics()).includes(topic) &&
      (await admin.createTopics({
        topics: [
          {
            topic,
            numPartitions: options.partitions ?? DEFAULT_PARTITIONS,
            replicationFactor: options.replicationFactor ?? 1,
          },
        ],
        waitForLeaders: true,
      }));
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    return { created, partitions: metadata.topics[0]?.partitions.length ?? 0 };
  } finally {
    await admin.disconnect();
  }
}

/** Delete a topic if it exists (test clean-up). */
export async function deleteTopic(kafka: Kafka, topic: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = await admin.listTopics();
    if (existing.includes(topic)) await admin.deleteTopics({ topics: [topic] });
  } finally {
    await admin.disconnect();
  }
}

export const DEFAULT_HEADERS: Readonly<Record<string, string>> = { "content-type": "application/json" };

/**
 * The Kafka record for a stream message. The same headers go on every message, malformed ones
 * included: upstream believes it sends JSON, and the truth about a message is only in the manifest.
 * No explicit timestamp: kafkajs stamps the real send time even under a simulated clock, so time-based
 * retention never deletes a fresh topic because its events claim to be from 2025.
 */
export function toKafkaMessage(m: StreamMessage, headers: Readonly<Record<string, string>> | null): Message {
  return headers ? { key: m.key, value: m.value, headers: { ...headers } } : { key: m.key, value: m.value };
}
