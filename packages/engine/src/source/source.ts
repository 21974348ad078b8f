// The one interface the engine reads input through. The batch loop never touches kafkajs directly,
// so another client could replace it without touching the engine.

/** A planned, half-open range of offsets [from, to) of one partition. */
export interface OffsetRange {
  partition: number;
  from: number;
  to: number;
}

export interface PartitionOffsets {
  partition: number;
  /** The earliest offset still retained. */
  low: number;
  /** The offset the next produced message will get (the log end). */
  high: number;
}

export interface SourceRecord {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  /** The record's Kafka timestamp (producer or broker time): Sluice's ingest time. */
  timestamp: number;
}

export interface RecordSource {
  /** Retained offsets of every partition of the topic, fetched now. */
  partitionOffsets(): Promise<PartitionOffsets[]>;
  /** Exactly the records in the given ranges, in offset order per partition. */
  read(ranges: OffsetRange[]): Promise<SourceRecord[]>;
  close(): Promise<void>;
}

/** Next offset to read per partition after these ranges, as the checkpoint stores it. */
export function endOffsetsOf(ranges: OffsetRange[]): Record<string, number> {
  return Object.fromEntries(ranges.map((r) => [String(r.partition), r.to]));
}

/** Same partitions and offsets, in any order. */
export function sameRanges(a: OffsetRange[], b: OffsetRange[]): boolean {
  const key = (rs: OffsetRange[]) =>
    JSON.stringify([...rs].sort((x, y) => x.partition - y.partition).map((r) => [r.partition, r.from, r.to]));
  return key(a) === key(b);
}
