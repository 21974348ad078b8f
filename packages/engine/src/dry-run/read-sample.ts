// The sample a dry run reads: the last N records of each partition, or the records of a time range
// (by Kafka timestamp, kafkajs' fetchTopicOffsetsByTimestamp), at most N per partition — read through
// the same KafkaSource a real batch reads exact ranges with. Nothing is committed to Kafka (the source
// never commits offsets) and its consumer group is one of its own, gone when it disconnects.
import type { Kafka } from "kafkajs";
import { ConfigurationError } from "../errors";
import { KafkaSource } from "../source/kafka-source";
import type { OffsetRange, SourceRecord } from "../source/source";

export type SampleRequest =
  { kind: "last"; perPartition: number } | { kind: "range"; from: Date; to: Date; perPartition: number };

export interface Sample {
  ranges: OffsetRange[];
  records: SourceRecord[];
  /** Partitions whose time range held more than perPartition records (only the first ones were read). */
  truncated: number[];
}

export async function readSample(
  kafka: Kafka,
  topic: string,
  request: SampleRequest,
  opts: { timeoutMs: number },
): Promise<Sample> {
  const admin = kafka.admin();
  await admin.connect();
  let ranges: OffsetRange[];
  const truncated: number[] = [];
  try {
    const topics = await admin.listTopics();
    if (!topics.includes(topic))
      throw new ConfigurationError(
        `source.kafka.topic: the topic "${topic}" does not exist on the Kafka cluster: check its name, or create it before a dry run`,
      );
    const offsets = (await admin.fetchTopicOffsets(topic)).map((o) => ({
      partition: o.partition,
      low: Number(o.low),
      high: Number(o.high),
    }));
    if (request.kind === "last") {
      ranges = offsets.map((o) => ({
        partition: o.partition,
        from: Math.max(o.low, o.high - request.perPartition),
        to: o.high,
      }));
    } else {
      // The first offset at or after each timestamp; -1 means none, i.e. the log end.
      const at = async (time: Date) =>
        new Map(
          (await admin.fetchTopicOffsetsByTimestamp(topic, time.getTime())).map((o) => [
            o.partition,
            Number(o.offset),
          ]),
        );
      const [from, to] = [await at(request.from), await at(request.to)];
      ranges = offsets.map((o) => {
        const start = Math.max(
          o.low,
          from.get(o.partition) === -1 ? o.high : (from.get(o.partition) ?? o.high),
        );
        const end = to.get(o.partition) === -1 ? o.high : (to.get(o.partition) ?? o.high);
        if (end - start > request.perPartition) truncated.push(o.partition);
        return {
          partition: o.partition,
          from: start,
          to: Math.max(start, Math.min(end, start + request.perPartition)),
        };
      });
    }
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  ranges.sort((a, b) => a.partition - b.partition);
  truncated.sort((a, b) => a - b);
  const source = new KafkaSource({ kafka, topic, groupPrefix: "dry-run", readTimeoutMs: opts.timeoutMs });
  try {
    return { ranges, records: await source.read(ranges), truncated };
  } finally {
    await source.close();
  }
}
