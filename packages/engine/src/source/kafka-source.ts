// Reads exact offset ranges from a Kafka topic with kafkajs.
//
// kafkajs has no manual partition assignment (tulios/kafkajs#373): every consumer is a group member.
// So each KafkaSource owns a consumer in a group of its own (unique per process and pipeline
// version), which the group therefore assigns every partition. For each batch we seek every
// partition to its planned start, resume it, collect messages until the planned end, and pause it
// again. The consumer stays warm between batches; offsets are never committed to Kafka — the
// checkpoint in Postgres is the only truth about progress.
//
// Read-ahead (performance): when a partition's range is done, it keeps fetching up to one more
// batch's worth of records into a buffer while the engine processes and commits. The next read()
// uses the buffer only if its range starts exactly where the buffer starts, so a read still returns
// exactly the planned offsets; otherwise the buffer is dropped and the partition seeks as before.
//
// Partitions added to the topic later: the admin client refreshes the topic's metadata on every
// offsets request (kafkajs admin clients have no metadata max age), so plans include a new partition
// at once; the consumer's group, though, assigned it only the partitions it knew when it joined, so a
// read of a partition it was not assigned rejoins with fresh metadata.
//
// Outages: kafkajs gives up on a broker that does not answer with errors it calls non-retriable; to
// Sluice any failure to reach Kafka is a RetriableError (the batch re-runs). A consumer that crashed
// is not restarted by kafkajs (restartOnFailure: false): a read waiting on it fails at once, and the
// next read starts a fresh one. The admin client is replaced after a failure too.
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

/** Records fetched past the end of the last read, starting at `from`, for the next one. */
interface ReadAhead {
  from: number;
  /** The offset the consumer fetches next for this partition. */
  next: number;
  records: SourceRecord[];
  /** Stop fetching (pause the partition) once this many records are held. */
  limit: number;
}

/** Read ahead at most this many records per partition, whatever the batch size. */
const MAX_READ_AHEAD = 50_000;

interface PendingRead {
  partitions: Map<number, PendingPartition>;
  remaining: Set<number>;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** The consumer group prefix of a version's runner, or of one of its partition groups' runners. */
export const runnerGroupPrefix = (pipelineVersionId: string, groupNo?: number): string =>
  groupNo === undefined ? pipelineVersionId : `${pipelineVersionId}.g${groupNo}`;

export class KafkaSource implements RecordSource {
  private readonly kafka: Kafka;
  private readonly topic: string;
  private readonly groupId: string;
  private readonly readTimeoutMs: number;
  private admin: Admin | undefined;
  private consumer: Consumer | undefined;
  /** The partitions the consumer's group assigned it at its last join. */
  private assigned = new Set<number>();
  private joined: Promise<void> | undefined;
  private pending: PendingRead | undefined;
  private readonly ahead = new Map<number, ReadAhead>();

  constructor(opts: KafkaSourceOptions) {
    this.kafka = opts.kafka;
    this.topic = opts.topic;
    // A group of its own: unique per process so two runners never split partitions between them.
    this.groupId = `sluice.${opts.groupPrefix}.${process.pid}.${randomBytes(4).toString("hex")}`;
    this.readTimeoutMs = opts.readTimeoutMs ?? 60_000;
  }

  async partitionOffsets(): Promise<PartitionOffsets[]> {
    try {
      if (!this.admin) {
        this.admin = this.kafka.admin();
        await this.admin.connect();
      }
      const offsets = await this.admin.fetchTopicOffsets(this.topic);
      return offsets
        .map((o) => ({ partition: o.partition, low: Number(o.low), high: Number(o.high) }))
        .sort((a, b) => a.partition - b.partition);
    } catch (err) {
      await this.admin?.disconnect().catch(() => undefined);
      this.admin = undefined;
      throw new RetriableError(
        `could not fetch offsets of topic "${this.topic}": ${(err as Error).message}`,
        err,
      );
    }
  }

  async read(ranges: OffsetRange[]): Promise<SourceRecord[]> {
    const wanted = ranges.filter((r) => r.to > r.from);
    if (wanted.length === 0) return [];
    try {
      return await this.readRanges(wanted);
    } catch (err) {
      if (err instanceof RetriableError) throw err;
      // The consumer may be half-way through anything: the next read starts a fresh one.
      await this.closeConsumer();
      throw new RetriableError(`could not read topic "${this.topic}": ${(err as Error).message}`, err);
    }
  }

  private async readRanges(wanted: OffsetRange[]): Promise<SourceRecord[]> {
    let consumer = await this.ensureConsumer();
    if (wanted.some((r) => !this.assigned.has(r.partition))) {
      // A partition added since the group was joined: join again, with metadata that knows it.
      await this.closeConsumer();
      consumer = await this.ensureConsumer();
    }

    const partitions = new Map<number, PendingPartition>();
    const seek: number[] = [];
    for (const r of wanted) {
      const state: PendingPartition = { next: r.from, to: r.to, records: [] };
      partitions.set(r.partition, state);
      const buffered = this.ahead.get(r.partition);
      this.ahead.delete(r.partition);
      if (buffered?.from !== r.from) {
        seek.push(r.partition);
        continue;
      }
      // The read-ahead starts exactly at this range: take what it holds, fetch the rest (no seek).
      const upTo = buffered.records.findIndex((rec) => rec.offset >= r.to);
      state.records = upTo === -1 ? buffered.records : buffered.records.slice(0, upTo);
      state.next = buffered.next;
      if (state.next >= r.to)
        this.ahead.set(r.partition, {
          ...buffered,
          from: r.to,
          records: upTo === -1 ? [] : buffered.records.slice(upTo),
        });
    }
    const remaining = new Set([...partitions].filter(([, st]) => st.next < st.to).map(([p]) => p));
    const done = new Promise<void>((resolve, reject) => {
      this.pending = { partitions, remaining, resolve, reject };
      if (remaining.size === 0) resolve();
    });
    for (const p of seek)
      consumer.seek({ topic: this.topic, partition: p, offset: String(partitions.get(p)!.next) });
    if (remaining.size > 0) consumer.resume([{ topic: this.topic, partitions: [...remaining] }]);

    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const missing = [...(this.pending?.remaining ?? [])].map((p) => {
          const s = partitions.get(p)!;
          return `partition ${p} at ${s.next} of ${s.to}`;
        });
        reject(
          new RetriableError(
            `Kafka read of "${this.topic}" timed out after ${this.readTimeoutMs} ms (${missing.join(", ")})`,
          ),
        );
      }, this.readTimeoutMs);
    });
    try {
      await Promise.race([done, timeout]);
    } finally {
      clearTimeout(timer);
      this.pending = undefined;
      // Only partitions still reading ahead keep fetching.
      const fetching = [...this.ahead].filter(([, a]) => a.records.length < a.limit).map(([p]) => p);
      consumer.pause([{ topic: this.topic }]);
      if (fetching.length > 0) consumer.resume([{ topic: this.topic, partitions: fetching }]);
    }
    return wanted.flatMap((r) => partitions.get(r.partition)!.records);
  }

  async close(): Promise<void> {
    await this.closeConsumer();
    await this.admin?.disconnect().catch(() => undefined);
    this.admin = undefined;
  }

  private async closeConsumer(): Promise<void> {
    await this.consumer?.disconnect().catch(() => undefined);
    this.consumer = undefined;
    this.joined = undefined;
    this.assigned = new Set();
    this.ahead.clear();
  }

  private seekPending(consumer: Consumer): void {
    for (const [partition, state] of this.pending?.partitions ?? []) {
      if (this.pending?.remaining.has(partition)) {
        consumer.seek({ topic: this.topic, partition, offset: String(state.next) });
      }
    }
  }

  private async ensureConsumer(): Promise<Consumer> {
    if (!this.joined) this.joined = this.startConsumer();
    try {
      await this.joined;
    } catch (err) {
      // A failed start is not remembered: the next read tries again.
      await this.closeConsumer();
      throw err;
    }
    if (!this.consumer)
      throw new RetriableError(`the Kafka consumer of "${this.topic}" stopped while joining its group`);
    return this.consumer;
  }

  /** kafkajs disconnected the consumer after a failure it gave up on; a read waiting on it fails now. */
  private onCrash(consumer: Consumer, error: Error): void {
    if (this.consumer !== consumer) return;
    this.consumer = undefined;
    this.joined = undefined;
    this.assigned = new Set();
    this.ahead.clear();
    this.pending?.reject(
      new RetriableError(`the Kafka consumer of "${this.topic}" stopped: ${error.message}`, error),
    );
  }

  private async startConsumer(): Promise<void> {
    const consumer = this.kafka.consumer({
      groupId: this.groupId,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 250,
      maxBytesPerPartition: 4 * 1024 * 1024,
      maxBytes: 32 * 1024 * 1024,
      // We restart it ourselves, on the next read (onCrash).
      retry: { restartOnFailure: async () => false },
    });
    this.consumer = consumer;
    const joined = new Promise<void>((resolve, reject) => {
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        this.onCrash(consumer, payload.error);
        reject(payload.error);
      });
      consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
        // After any (re)join the group resets positions; put pending partitions back where we were,
        // and drop read-ahead buffers (their partitions seek on their next read).
        this.assigned = new Set(payload.memberAssignment[this.topic] ?? []);
        this.ahead.clear();
        this.seekPending(consumer);
        resolve();
      });
    });
    // Awaited below; a crash before that (while connecting) must not count as unhandled.
    joined.catch(() => undefined);
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

  private async onBatch({ batch, resolveOffset, isStale }: EachBatchPayload): Promise<void> {
    const partition = batch.partition;
    const pending = this.pending;
    const state = pending?.remaining.has(partition) ? pending.partitions.get(partition) : undefined;
    const ahead = state ? undefined : this.ahead.get(partition);
    if (!state && !ahead) {
      this.consumer?.pause([{ topic: this.topic, partitions: [partition] }]);
      return;
    }
    // Stale fetches from before a seek can still arrive: drop a batch fetched before a pending seek
    // or from past our position (it cannot be contiguous), and skip records before the next offset.
    const next = state ? state.next : ahead!.next;
    const fetchedFrom = Number((batch as unknown as { fetchedOffset?: string }).fetchedOffset ?? next);
    if (isStale() || fetchedFrom > next) return;
    const overflow: SourceRecord[] = [];
    let last: string | undefined;
    for (const m of batch.messages) {
      const offset = Number(m.offset);
      if (offset < next) continue;
      const record = { partition, offset, key: m.key, value: m.value, timestamp: Number(m.timestamp) };
      if (state && offset < state.to) {
        state.records.push(record);
        state.next = offset + 1;
      } else (ahead ? ahead.records : overflow).push(record);
      last = m.offset;
    }
    if (last === undefined) return;
    // Only the position matters (offsets are never committed): resolve the last record taken.
    resolveOffset(last);
    const fetched = Math.max(next, Number(batch.lastOffset()) + 1);

    if (ahead) {
      ahead.next = fetched;
      if (ahead.records.length >= ahead.limit)
        this.consumer?.pause([{ topic: this.topic, partitions: [partition] }]);
      return;
    }
    // Offsets may have gaps (compaction, transaction markers): the range is done once the batch
    // reaches past its last offset. What was fetched beyond it starts the read-ahead.
    if (state!.next >= state!.to || Number(batch.lastOffset()) >= state!.to - 1) {
      pending!.remaining.delete(partition);
      // Read ahead about one batch of this partition.
      const limit = Math.min(MAX_READ_AHEAD, Math.max(1000, state!.records.length));
      this.ahead.set(partition, {
        from: state!.to,
        next: Math.max(state!.to, fetched),
        records: overflow,
        limit,
      });
      if (pending!.remaining.size === 0) pending!.resolve();
    }
  }
}
