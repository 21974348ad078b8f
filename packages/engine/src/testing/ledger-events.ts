// Plain, valid events of the ledger spec's contract sent to chosen partitions, for tests that must
// know which event landed where (a partition added later, a start "from now"). Each call's ids are
// unique (`<prefix>-<n>`), so the expected sink is the union of what the test sent after a point.
import { CompressionTypes, type Kafka } from "kafkajs";

export interface SentEvents {
  ids: string[];
  /** How many went to each partition. */
  perPartition: Record<string, number>;
}

export async function sendLedgerEvents(
  kafka: Kafka,
  topic: string,
  opts: { prefix: string; count: number; partitions: number[]; eventTime?: Date },
): Promise<SentEvents> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const ids: string[] = [];
    const perPartition: Record<string, number> = {};
    const messages = Array.from({ length: opts.count }, (_, i) => {
      const id = `${opts.prefix}-${String(i).padStart(5, "0")}`;
      const partition = opts.partitions[i % opts.partitions.length]!;
      ids.push(id);
      perPartition[String(partition)] = (perPartition[String(partition)] ?? 0) + 1;
      const event = {
        event_id: id,
        type: "authorization",
        merchant_id: `m${i % 7}`,
        customer_id: `c${i % 11}`,
        payment_id: `p-${id}`,
        seq: 1,
        amount: "12.50",
        currency: "EUR",
        card_country: "DE",
        event_time: (opts.eventTime ?? new Date()).toISOString(),
      };
      return { partition, key: event.merchant_id, value: JSON.stringify(event) };
    });
    await producer.send({ topic, messages, acks: -1 });
    return { ids, perPartition };
  } finally {
    await producer.disconnect();
  }
}

/**
 * Valid ledger events that carry 250 000 empty objects each: 750 KB of JSON (a few KB gzipped on the
 * wire) that parses into ~16 MB of heap. Thirty of them in one batch exhaust a process started with
 * --max-old-space-size=192 — a poison batch that really kills its process (out of memory).
 */
export async function sendPoisonEvents(
  kafka: Kafka,
  topic: string,
  opts: { count: number; partition: number },
): Promise<string[]> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const attachment = JSON.stringify(Array.from({ length: 250_000 }, () => ({})));
  const ids: string[] = [];
  try {
    for (let sent = 0; sent < opts.count; sent += 5) {
      const messages = Array.from({ length: Math.min(5, opts.count - sent) }, (_, i) => {
        const id = `poison-${String(sent + i).padStart(3, "0")}`;
        ids.push(id);
        const event = {
          event_id: id,
          type: "authorization",
          merchant_id: "m1",
          customer_id: "c1",
          payment_id: `p-${id}`,
          seq: 1,
          amount: "1.00",
          currency: "EUR",
          card_country: "DE",
          event_time: new Date().toISOString(),
        };
        return {
          partition: opts.partition,
          key: "m1",
          value: `${JSON.stringify(event).slice(0, -1)},"attachment":${attachment}}`,
        };
      });
      await producer.send({ topic, messages, acks: -1, compression: CompressionTypes.GZIP });
    }
  } finally {
    await producer.disconnect();
  }
  return ids;
}
