// Reads exact offset ranges from a Kafka topic with kafkajs.
//
// kafkajs has no manual partition assignment (tulios/kafkajs#373): every consumer is a group member.
// So each KafkaSource owns a consumer in a group of its own (unique per process and pipeline
// version), which the group therefore assigns every partition. For each batch we seek every
// partition to its planned start, resume it, collect messages until the planned end, and pause it
// again. The consumer stays warm between batches; offsets are never committed to Kafka — the
// checkpoint in Postgres is the only truth about progress.
import { randomBytes } from "node:crypto";
import type { Admin, Consumer, EachBatchPayload, Kafka } from "kafkajs";
import { RetriableError } from "../errors";
import type { OffsetRange, PartitionOffsets, RecordSource, SourceRecord } from "./source";

export interface KafkaSourceOptions {
  kafka: Kafka;
  topic: string;
  /** Stable part of the consumer group id, e.g. the pipeline version id. */
  groupPrefix: string;
  /** How long one read may take before it is abandoned (and the batch retried). */
  readTimeoutMs?: number;
}

interface PendingPartition {
  next: number;
  to: number;
  records: SourceRecord[];
}

interface PendingRead {
  partitions: Map<number, PendingPartition>;
  remaining: Set<number>;
  resolve: () => void;
}

export class KafkaSource implements RecordSource {
  private readonly kafka: Kafka;
  private readonly topic: string;
  private readonly groupId: string;
  private readonly readTimeoutMs: number;
  private admin: Admin | undefined;
  private consumer: Consumer | undefined;
  private joined: Promise<void> | undefined;
  private pending: PendingRead | undefined;

  constructor(opts: KafkaSourceOptions) {
    this.kafka = opts.kafka;
    this.topic = opts.topic;
    // A group of its own: unique per process so two runners never split partitions between them.
    this.groupId = `sluice.${opts.groupPrefix}.${process.pid}.${randomBytes(4).toString("hex")}`;
    this.readTimeoutMs = opts.readTimeoutMs ?? 60_000;
  }

  async partitionOffsets(): Promise<PartitionOffsets[]> {
    if (!this.admin) {
      this.admin = this.kafka.admin();
      await this.admin.connect();
    }
    try {
      const offsets = await this.admin.fetchTopicOffsets(this.topic);
      return offsets
        .map((o) => ({ partition: o.partition, low: Number(o.low), high: Number(o.high) }))
        .sort((a, b) => a.partition - b.partition);
    } catch (err) {
      throw new RetriableError(`could not fetch offsets of topic "${this.topic}": ${(err as Error).message}`, err);
    }
  }

  async read(ranges: OffsetRange[]): Promise<SourceRecord[]> {
    const wanted = ranges.filter((r) => r.to > r.from);
    if (wanted.length === 0) return [];
    const consumer = await this.ensureConsumer();

    const partitions = new Map<number, PendingPartition>();
    for (const r of wanted) partitions.set(r.partition, { next: r.from, to: r.to, records: [] });
    const done = new Promise<void>((resolve) => {
      this.pending = { partitions, remaining: new Set(partitions.keys()), resolve };
    });
    this.seekPending(consumer);
    consumer.resume([{ topic: this.topic, partitions: [...partitions.keys()] }]);

    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const missing = [...(this.pending?.remaining ?? [])].map((p) => {
          const s = partitions.get(p)!;
          return `partition ${p} at ${s.next} of ${s.to}`;
        });
        reject(new RetriableError(`Kafka read of "${this.topic}" timed out after ${this.readTimeoutMs} ms (${missing.join(", ")})`));
      }, this.readTimeoutMs);
    });
    try {
      await Promise.race([done, timeout]);
    } finally {
      clearTimeout(timer);
      this.pending = undefined;
      consumer.pause([{ topic: this.topic }]);
    }
    return wanted.flatMap((r) => partitions.get(r.partition)!.records);
  }

  async close(): Promise<void> {
    await this.consumer?.disconnect().catch(() => undefined);
    await this.admin?.disconnect().catch(() => undefined);
    this.consumer = undefined;
    this.admin = undefined;
    this.joined = undefined;
  }

  private seekPending(consumer: Consumer): void {
    for (const [partition, state] of this.pending?.partitions ?? []) {
      if (this.pending?.remaining.has(partition)) {
        consumer.seek({ topic: this.topic, partition, offset: String(state.next) });
      }
    }
  }

  private ensureConsumer(): Promise<Consumer> {
    if (!this.joined) this.joined = this.startConsumer();
    return this.joined.then(() => this.consumer!);
  }

  private async startConsumer(): Promise<void> {
    const consumer = this.kafka.consumer({
      groupId: this.groupId,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 250,
      maxBytesPerPartition: 4 * 1024 * 1024,
      maxBytes: 32 * 1024 * 1024,
    });
    this.consumer = consumer;
    const joined = new Promise<void>((resolve) => {
      consumer.on(consumer.events.GROUP_JOIN, () => {
        // After any (re)join the group resets positions; put pending partitions back where we were.
        this.seekPending(consumer);
        resolve();
      });
    });
    await consumer.connect();
    await consumer.subscribe({ topic: this.topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 4,
      eachBatch: (payload) => this.onBatch(payload),
    });
    await joined;
    // Nothing is read until a batch asks for it.
    consumer.pause([{ topic: this.topic }]);
  }

  private async onBatch({ batch, resolveOffset }: EachBatchPayload): Promise<void> {
    const pending = this.pending;
    const state = pending?.partitions.get(batch.partition);
    if (!pending || !state || !pending.remaining.has(batch.partition)) {
      this.consumer?.pause([{ topic: this.topic, partitions: [batch.partition] }]);
      return;
    }
    for (const m of batch.messages) {
      const offset = Number(m.offset);
      // Stale fetches from before a seek can still arrive: skip what is before or past the range.
      if (offset < state.next) continue;
      if (offset >= state.to) break;
      state.records.push({ partition: batch.partition, offset, key: m.key, value: m.value, timestamp: Number(m.timestamp) });
      state.next = offset + 1;
      resolveOffset(m.offset);
    }
    // Offsets may have gaps (compaction, transaction markers): the range is done once the batch
    // reaches past its last offset.
    if (state.next >= state.to || Number(batch.lastOffset()) >= state.to - 1) {
      pending.remaining.delete(batch.partition);
      this.consumer?.pause([{ topic: this.topic, partitions: [batch.partition] }]);
      if (pending.remaining.size === 0) pending.resolve();
    }
  }
}
