// A dry run of a draft on a bounded sample of its real topic: the same engine code as a real batch
// (@sluice/engine dryRunBatch), with nothing written anywhere — no plan, checkpoint, state, dead
// letter, sink row or webhook call, and no offsets committed to Kafka. Bounded in size
// (MAX_SAMPLE_PER_PARTITION, MAX_SAMPLE_RECORDS) and in time (DRY_RUN_READ_TIMEOUT_MS to read,
// DRY_RUN_EVALUATE_TIMEOUT_MS to evaluate). It runs in the console's process without holding its event
// loop: the batch code yields every DRY_RUN_YIELD_EVERY rows, and each row's expressions are linear in
// its values (RE2 regular expressions, bounded CEL), so a hostile spec slows only its own dry run.
import type { Kafka } from "kafkajs";
import type pg from "pg";
import {
  ConfigurationError,
  dryRunBatch,
  isRetriable,
  readSample,
  type DryRunResult,
  type OffsetRange,
} from "@sluice/engine";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { DRY_RUN_READ_TIMEOUT_MS, MAX_SAMPLE_RECORDS, type TSampleRequest } from "./draft-input";
import { DRY_RUN_EVALUATE_TIMEOUT_MS, DRY_RUN_YIELD_EVERY } from "./draft-limits";

export type TDryRunDraft =
  | { ok: false; message: string }
  | ({
      ok: true;
      topic: string;
      ranges: OffsetRange[];
      truncatedPartitions: number[];
      tookMs: number;
      written: "nothing";
    } & DryRunResult);

export async function dryRunDraft(
  res: { pool: pg.Pool; kafka: Kafka },
  spec: TPipelineSpec,
  sample: TSampleRequest,
  limits: { evaluateTimeoutMs?: number } = {},
): Promise<TDryRunDraft> {
  const started = Date.now();
  const topic = spec.source.kafka.topic;
  const partitions = await partitionCount(res.kafka, topic);
  if (partitions === undefined)
    return {
      ok: false,
      message: `source.kafka.topic: the topic "${topic}" does not exist on the Kafka cluster: check its name (nothing was read or written)`,
    };
  if (partitions * sample.perPartition > MAX_SAMPLE_RECORDS) {
    const most = Math.floor(MAX_SAMPLE_RECORDS / partitions);
    return {
      ok: false,
      message: `a sample of ${sample.perPartition} records from each of ${partitions} partitions is over the limit of ${MAX_SAMPLE_RECORDS.toLocaleString("en")} records: ask for at most ${most} per partition`,
    };
  }
  try {
    const read = await readSample(res.kafka, topic, sample, { timeoutMs: DRY_RUN_READ_TIMEOUT_MS });
    const evaluateMs = limits.evaluateTimeoutMs ?? DRY_RUN_EVALUATE_TIMEOUT_MS;
    const signal = AbortSignal.timeout(evaluateMs);
    const result = await dryRunBatch(res.pool, spec, read.records, new Date(), {
      yieldEvery: DRY_RUN_YIELD_EVERY,
      signal,
    }).catch((err: unknown) => {
      if (signal.aborted) return undefined;
      throw err;
    });
    if (!result)
      return {
        ok: false,
        message: `the dry run took longer than ${evaluateMs / 1000} s to evaluate ${read.records.length.toLocaleString("en")} records and was stopped (nothing was written): try a smaller sample, or simpler expressions`,
      };
    return {
      ok: true,
      topic,
      ranges: read.ranges,
      truncatedPartitions: read.truncated,
      tookMs: Date.now() - started,
      written: "nothing",
      ...result,
    };
  } catch (err) {
    if (err instanceof ConfigurationError || isRetriable(err))
      return {
        ok: false,
        message: `the dry run could not read its sample: ${(err as Error).message} (nothing was written)`,
      };
    throw err;
  }
}

async function partitionCount(kafka: Kafka, topic: string): Promise<number | undefined> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = await admin.listTopics();
    if (!topics.includes(topic)) return undefined;
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    return meta.topics[0]?.partitions.length ?? 0;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
