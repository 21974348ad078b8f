// Plain, valid events of the ledger spec's contract sent to chosen partitions, for tests that must
// know which event landed where (a partition added later, a start "from now"). Each call's ids are
// unique (`<prefix>-<n>`), so the expected sink is the union of what the test sent after a point.
import type { Kafka } from "kafkajs";

export interface SentEvents {
  ids: string[];
  /** How many went to each partition. */
  perPartition: Record<string, number>;
}

export async function sendLedgerEvents(kafka: Kafka, topic: string, opts: { prefix: string; count: number; partitions: number[] }): Promise<SentEvents> {
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
        event_time: new Date().toISOString(),
      };
      return { partition, key: event.merchant_id, value: JSON.stringify(event) };
    });
    await producer.send({ topic, messages, acks: -1 });
    return { ids, perPartition };
  } finally {
    await producer.disconnect();
  }
}
