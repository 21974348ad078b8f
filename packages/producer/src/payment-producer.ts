// Sends a PaymentStream to Kafka, finite (`produce`, for tests and benchmarks: as fast as acks allow)
// or continuous (`run`, for the demo: paced, until aborted), and keeps the manifest of what was acked.
import { setTimeout as sleep } from "node:timers/promises";
import { CompressionTypes, Partitioners, type Kafka, type Message, type Producer } from "kafkajs";
import {
  createKafka,
  DEFAULT_HEADERS,
  ensureTopic,
  isValidTopicName,
  type KafkaClientOptions,
} from "./kafka-output";
import { toKafkaMessage } from "./kafka-output";
import { ManifestBuilder, type Manifest, type ManifestDetail } from "./manifest";
import { OptionsError, type PaymentStreamOptions } from "./options";
import { PaymentStream, type StreamMessage } from "./payment-stream";

export interface PaymentProducerOptions extends PaymentStreamOptions, KafkaClientOptions {
  topic: string;
  /** An existing client; otherwise one is made from `brokers`/`clientId`. */
  kafka?: Kafka;
  /** Messages per Kafka request. Default 1000. */
  batchSize?: number;
  /** How much the manifest keeps. Default "full"; use "ids" or "counts" for millions of events. */
  manifest?: ManifestDetail;
  /** Headers on every message; false for none. Default { "content-type": "application/json" }. */
  headers?: Record<string, string> | false;
  /** Where progress lines go. Default console.log. */
  log?: (line: string) => void;
  /**
   * After a stop signal, how long to still wait for a send in flight and for the final flush, in ms.
   * Bounds how long stopping takes while Kafka is failing (kafkajs would otherwise retry for about a
   * minute). A send given up on this way is not in the manifest (Kafka may or may not have it). Default 5000.
   */
  stopGraceMs?: number;
}

export interface ProgressStats {
  /** Messages acked since this producer was created. */
  sent: number;
  events: number;
  duplicates: number;
  late: number;
  outOfOrder: number;
  malformed: number;
  /** Since the current produce/run call started. */
  elapsedMs: number;
  /** Messages per second over the current call. */
  ratePerSecond: number;
}

export interface ProgressOptions {
  /** Called every progressIntervalMs with running totals. Default: log one line. */
  onProgress?: (stats: ProgressStats) => void;
  /** 0 = no progress reports. Default: 0 for produce, 5000 for run. */
  progressIntervalMs?: number;
}

export interface ProduceOptions extends ProgressOptions {
  /** Exactly this many messages (events + duplicates + malformed), unless aborted. */
  count: number;
  signal?: AbortSignal;
}

export interface RunOptions extends ProgressOptions {
  ratePerSecond: number;
  /** Stop (after flushing) when aborted. */
  signal?: AbortSignal;
  /** Optional limit; without it, runs until aborted. */
  count?: number;
}

export interface ProduceResult {
  /** Everything this producer has sent so far (across calls). */
  manifest: Manifest;
  /** Messages acked during this call. */
  sent: number;
  elapsedMs: number;
  ratePerSecond: number;
  aborted: boolean;
}

/** One progress line: `sent=1200 events=1130 dupes=56 late=23 out-of-order=54 malformed=11 rate=200.0/s`. */
export function formatProgress(s: ProgressStats): string {
  return (
    `sent=${s.sent} events=${s.events} dupes=${s.duplicates} late=${s.late} out-of-order=${s.outOfOrder} ` +
    `malformed=${s.malformed} rate=${s.ratePerSecond.toFixed(1)}/s`
  );
}

export class PaymentProducer {
  readonly stream: PaymentStream;
  readonly topic: string;
  private readonly kafka: Kafka;
  private readonly producer: Producer;
  private readonly builder: ManifestBuilder;
  private readonly batchSize: number;
  private readonly headers: Readonly<Record<string, string>> | null;
  private readonly log: (line: string) => void;
  private readonly stopGraceMs: number;
  private connected = false;

  constructor(options: PaymentProducerOptions) {
    if (!isValidTopicName(options.topic ?? ""))
      throw new OptionsError(`invalid Kafka topic name: ${JSON.stringify(options.topic)}`);
    const batchSize = options.batchSize ?? 1000;
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100_000) {
      throw new OptionsError(`batchSize must be an integer in [1, 100000], got ${String(batchSize)}`);
    }
    this.stream = new PaymentStream(options);
    this.topic = options.topic;
    this.batchSize = batchSize;
    this.kafka = options.kafka ?? createKafka(options);
    this.builder = new ManifestBuilder(options.manifest ?? "full");
    this.headers = options.headers === false ? null : (options.headers ?? DEFAULT_HEADERS);
    this.log = options.log ?? ((line) => console.log(line));
    this.stopGraceMs = options.stopGraceMs ?? 5000;
    this.producer = this.kafka.producer({
      // Duplicates are the point: application-level retries are simulated, and Kafka must not dedupe.
      idempotent: false,
      // One request in flight, so a kafkajs retry cannot reorder a partition behind our back.
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      // Java-compatible murmur2 on the key: the same merchant lands in the same partition as with any
      // other Kafka client.
      createPartitioner: Partitioners.DefaultPartitioner,
    });
  }

  /** Create the topic if missing (see ensureTopic). */
  /** Create the topic if missing (see ensureTopic). With `signal`, gives up stopGraceMs after it aborts. */
  ensureTopic(partitions?: number, signal?: AbortSignal): Promise<{ created: boolean; partitions: number }> {
    return this.withinGrace(ensureTopic(this.kafka, this.topic, { partitions }), signal);
  }

  async connect(): Promise<void> {
    if (this.connected) return;
    await this.producer.connect();
    this.connected = true;
  }

  /** Safe to call at any time, also after a connect that was given up on. */
  async disconnect(): Promise<void> {
    this.connected = false;
    await this.producer.disconnect();
  }

  /** Connect, unless stopped first: false if `signal` aborted before Kafka answered. */
  private async connectUnlessStopped(signal?: AbortSignal): Promise<boolean> {
    try {
      await this.withinGrace(this.connect(), signal);
      return true;
    } catch (e) {
      if (signal?.aborted) return false;
      throw e;
    }
  }

  /** Everything acked so far. */
  manifest(): Manifest {
    return this.builder.manifest();
  }

  /**
   * Send exactly `count` messages as fast as acks allow, in batches of `batchSize`. The next batch is
   * generated while the previous one is in flight. On abort, stops after the batch in flight and sends
   * the events still held back for reordering, so every generated event is sent.
   */
  async produce(options: ProduceOptions): Promise<ProduceResult> {
    const { count, signal } = options;
    if (!Number.isInteger(count) || count < 0)
      throw new OptionsError(`count must be an integer >= 0, got ${String(count)}`);
    const progress = this.progressReporter(options, 0);
    if (!(await this.connectUnlessStopped(signal))) return progress.finish(0, true);
    let taken = 0;
    let sent = 0;
    let inflight: { done: Promise<unknown>; batch: StreamMessage[] } | null = null;
    const settle = async () => {
      if (!inflight) return;
      const { done, batch } = inflight;
      inflight = null;
      await this.withinGrace(done, signal);
      for (const m of batch) this.builder.record(m);
      sent += batch.length;
      progress.maybeReport();
    };
    try {
      while (taken < count && !signal?.aborted) {
        const n = Math.min(this.batchSize, count - taken);
        const batch: StreamMessage[] = new Array(n);
        for (let i = 0; i < n; i++) batch[i] = this.stream.next(count - taken++) as StreamMessage;
        await settle();
        inflight = { done: this.send(batch), batch };
      }
      await settle();
    } catch (e) {
      // Asked to stop while Kafka was failing: stop without the batch in flight rather than throw.
      if (!signal?.aborted) throw e;
      this.log(`stopped without confirming the batch in flight: ${(e as Error).message}`);
      return progress.finish(sent, true);
    }
    if (signal?.aborted) sent += await this.flushHeld(signal);
    return progress.finish(sent, signal?.aborted ?? false);
  }

  /**
   * Send about `ratePerSecond` messages per second until `signal` aborts (or `count` is reached), then
   * send the events held back for reordering and return. A failed send (e.g. the broker restarting) is
   * logged and retried until it succeeds or the run is aborted.
   */
  async run(options: RunOptions): Promise<ProduceResult> {
    const { ratePerSecond: rate, signal, count } = options;
    if (!(rate > 0) || !Number.isFinite(rate))
      throw new OptionsError(`ratePerSecond must be > 0, got ${String(rate)}`);
    if (count !== undefined && (!Number.isInteger(count) || count < 0)) {
      throw new OptionsError(`count must be an integer >= 0, got ${String(count)}`);
    }
    const progress = this.progressReporter(options, 5000);
    if (!(await this.connectUnlessStopped(signal))) return progress.finish(0, true);
    let start = performance.now();
    let sent = 0;
    const limit = count ?? Number.POSITIVE_INFINITY;
    while (sent < limit && !signal?.aborted) {
      const now = performance.now();
      let due = Math.floor(((now - start) / 1000) * rate) - sent;
      // After a stall (broker down), catch up at most one second's worth rather than bursting forever.
      const maxBacklog = Math.max(rate, this.batchSize);
      if (due > maxBacklog) {
        start += ((due - maxBacklog) / rate) * 1000;
        due = maxBacklog;
      }
      if (due <= 0) {
        const untilNext = ((sent + 1) / rate) * 1000 - (now - start);
        await sleep(Math.min(200, Math.max(20, untilNext)), undefined, { signal }).catch(() => undefined);
        progress.maybeReport();
        continue;
      }
      const n = Math.min(due, this.batchSize, limit - sent);
      const batch: StreamMessage[] = new Array(n);
      for (let i = 0; i < n; i++) batch[i] = this.stream.next(limit - sent - i) as StreamMessage;
      if (!(await this.sendUntilDone(batch, signal))) break;
      for (const m of batch) this.builder.record(m);
      sent += n;
      progress.maybeReport();
    }
    sent += await this.flushHeld(signal);
    const result = progress.finish(sent, signal?.aborted ?? false);
    progress.report();
    return result;
  }

  private async send(batch: StreamMessage[]): Promise<unknown> {
    if (batch.length === 0) return;
    const messages: Message[] = batch.map((m) => toKafkaMessage(m, this.headers));
    return this.producer.send({ topic: this.topic, messages, acks: -1, compression: CompressionTypes.None });
  }

  /** Retry a batch until acked; false if aborted first (the batch then counts as not sent). */
  private async sendUntilDone(batch: StreamMessage[], signal?: AbortSignal): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.withinGrace(this.send(batch), signal);
        return true;
      } catch (e) {
        if (signal?.aborted) return false;
        this.log(`send failed (attempt ${attempt}), retrying in 2s: ${(e as Error).message}`);
        await sleep(2000, undefined, { signal }).catch(() => undefined);
        if (signal?.aborted) return false;
      }
    }
  }

  /**
   * Send the events held back for reordering (stopping). When stopping on a signal this gets the
   * grace period, and a failure is logged rather than thrown: the stop should not hang on a dead broker.
   */
  private async flushHeld(signal?: AbortSignal): Promise<number> {
    const rest = this.stream.drain();
    if (rest.length === 0) return 0;
    try {
      await this.withinGrace(this.send(rest), signal);
    } catch (e) {
      if (!signal?.aborted) throw e;
      this.log(`could not send ${rest.length} events held back for reordering: ${(e as Error).message}`);
      return 0;
    }
    for (const m of rest) this.builder.record(m);
    return rest.length;
  }

  /** `work`, but once `signal` has aborted it gets at most stopGraceMs more before this rejects. */
  private withinGrace<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    if (!signal) return work;
    work.catch(() => undefined); // if we stop waiting, a later rejection is expected, not unhandled
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => {
        timer = setTimeout(
          () => reject(new Error(`no ack within ${this.stopGraceMs} ms of stopping`)),
          this.stopGraceMs,
        );
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      work.then(resolve, reject).finally(() => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      });
    });
  }

  private progressReporter(options: ProgressOptions, defaultIntervalMs: number) {
    const intervalMs = options.progressIntervalMs ?? defaultIntervalMs;
    const onProgress = options.onProgress ?? ((s: ProgressStats) => this.log(formatProgress(s)));
    const start = performance.now();
    const sentBefore = this.builder.manifest().counts.messages;
    let lastReport = start;
    const stats = (): ProgressStats => {
      const c = this.builder.manifest().counts;
      const elapsedMs = performance.now() - start;
      return {
        sent: c.messages,
        events: c.events,
        duplicates: c.duplicates,
        late: c.late,
        outOfOrder: c.outOfOrder,
        malformed: c.malformed,
        elapsedMs,
        ratePerSecond: elapsedMs > 0 ? ((c.messages - sentBefore) * 1000) / elapsedMs : 0,
      };
    };
    return {
      maybeReport: () => {
        if (intervalMs <= 0 || performance.now() - lastReport < intervalMs) return;
        lastReport = performance.now();
        onProgress(stats());
      },
      report: () => {
        if (intervalMs > 0) onProgress(stats());
      },
      finish: (sent: number, aborted: boolean): ProduceResult => {
        const elapsedMs = performance.now() - start;
        return {
          manifest: this.manifest(),
          sent,
          elapsedMs,
          ratePerSecond: elapsedMs > 0 ? (sent * 1000) / elapsedMs : 0,
          aborted,
        };
      },
    };
  }
}

export interface ProducePaymentsOptions extends PaymentProducerOptions {
  count: number;
  /** Create the topic with this many partitions if missing. Default 6. */
  partitions?: number;
  signal?: AbortSignal;
}

/** One call for tests and benchmarks: ensure the topic, connect, produce `count` messages, disconnect. */
export async function producePayments(options: ProducePaymentsOptions): Promise<ProduceResult> {
  const producer = new PaymentProducer(options);
  await producer.ensureTopic(options.partitions);
  try {
    return await producer.produce({ count: options.count, signal: options.signal });
  } finally {
    await producer.disconnect();
  }
}
