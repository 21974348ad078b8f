// A join's dimension changelog, read in the same batch as the source: from the offsets the join's
// checkpoint committed up to the topic's end (at most dimension.kafka.maxOffsetsPerTrigger), decoded
// and checked against the dimension's contract. A change that does not fit is a dead letter of the
// pipeline (topic = the dimension's). The dimension's watermark follows its slowest active partition,
// like the source's (batch/partition-watermark.ts); when every dimension partition is idle, nothing is
// pending there, and it follows the source's event time instead, so a quiet dimension never holds
// rows back. Nothing is recorded before reading: only the committed offsets count, and a batch that
// does not commit reads the same changes again (possibly more) on its next attempt.
import { contractColumns, type TChangelogDimension, type TCompiledSpec } from "@sluice/pipeline-spec";
import { contractChecker } from "../batch/contract";
import { decodeJson } from "../batch/decode";
import type { DeadLetterRow } from "../batch/process-batch";
import {
  advancePartitionClocks,
  combinedEventTime,
  type PartitionClocks,
} from "../batch/partition-watermark";
import { nextWatermark } from "../batch/watermark";
import { sequenceType } from "../cdc/sequence";
import { planBatch, startingOffsets } from "../plan/plan-batch";
import { endOffsetsOf, type RecordSource } from "../source/source";
import type { DimensionVersion } from "./dimension-versions";

/** What the checkpoint keeps for a join (checkpoints.dimension). */
export interface DimensionCheckpoint {
  endOffsets?: Record<string, number>;
  clocks?: PartitionClocks;
  watermark?: string | null;
  /** The join's state: versions and rows waiting, rows and bytes. */
  versions?: { rows: number; bytes: number };
  held?: { rows: number; bytes: number };
}

export interface DimensionChange {
  entityKey: string;
  version: DimensionVersion;
}

export interface DimensionRead {
  changes: DimensionChange[];
  deadLetters: DeadLetterRow[];
  records: number;
  endOffsets: Record<string, number>;
  clocks: PartitionClocks;
  watermark: Date | null;
  /** Records still unread after this batch's range. */
  backlog: number;
}

/** One text per entity: the key values as a JSON array (the row side builds the same from `join.on`). */
export const entityKeyOf = (values: unknown[]) =>
  JSON.stringify(values.map((v) => (v instanceof Date ? v.toISOString() : v)));

/** A contract-typed value as JSON (timestamps ISO text); values round-trip through jsonb unchanged. */
export const jsonValue = (v: unknown) => (v instanceof Date ? v.toISOString() : (v ?? null));

export class DimensionReader {
  private readonly columns;
  private readonly checker;
  private readonly seq;

  constructor(
    private readonly source: RecordSource,
    private readonly dim: TChangelogDimension,
    private readonly compiled: TCompiledSpec,
  ) {
    this.columns = contractColumns(dim);
    this.checker = contractChecker(dim, this.columns);
    const seqField = dim.sequenceBy ? dim.contract.fields[dim.sequenceBy] : undefined;
    this.seq = seqField ? sequenceType(seqField.type) : undefined;
  }

  get sequence() {
    return this.seq;
  }

  /** `sourceTime`: the source's event time after this batch (followed when every dimension partition is idle). */
  async read(cp: DimensionCheckpoint, sourceTime: Date | null, now: Date): Promise<DimensionRead> {
    const partitions = await this.source.partitionOffsets();
    const committed = cp.endOffsets ?? startingOffsets(this.dim.kafka.startingOffsets, partitions) ?? {};
    const plan = planBatch({
      committedEnd: committed,
      partitions,
      maxOffsetsPerTrigger: this.dim.kafka.maxOffsetsPerTrigger,
    });
    const wanted = this.dim.kafka.partitions;
    const ranges = wanted ? plan.ranges.filter((r) => wanted.includes(r.partition)) : plan.ranges;
    const records = ranges.some((r) => r.to > r.from) ? await this.source.read(ranges) : [];
    const changes: DimensionChange[] = [];
    const deadLetters: DeadLetterRow[] = [];
    const maxByPartition = new Map<number, Date>();
    const withData = new Set<number>();
    const eventColumn = this.dim.eventTime.column;
    for (const record of records) {
      withData.add(record.partition);
      const topic = this.dim.kafka.topic;
      const decoded = decodeJson(record);
      if (!decoded.ok) {
        deadLetters.push({ outcome: "dead_letter", reason: decoded.reason, record, payload: null, topic });
        continue;
      }
      const checked = this.checker.check(decoded.value);
      if (checked.kind !== "row") {
        const outcome = checked.kind === "quarantine" ? "quarantined" : "dead_letter";
        deadLetters.push({ outcome, reason: checked.reason, record, payload: decoded.value, topic });
        continue;
      }
      const row = checked.row;
      const time = row[eventColumn] as Date;
      const prev = maxByPartition.get(record.partition);
      if (!prev || time > prev) maxByPartition.set(record.partition, time);
      const { toCelRow, deleteWhen } = this.compiled.dimension!;
      changes.push({
        entityKey: entityKeyOf(this.dim.key.map((k) => row[k])),
        version: {
          validFromMs: time.getTime(),
          sequence: this.seq && this.dim.sequenceBy ? this.seq.canonical(row[this.dim.sequenceBy]) : null,
          deleted: deleteWhen ? deleteWhen.test(toCelRow(row)) : false,
          values: Object.fromEntries(this.columns.map((c) => [c.name, jsonValue(row[c.name])])),
        },
      });
    }
    const clocks = advancePartitionClocks(
      cp.clocks,
      { partitionsWithData: withData, maxEventTimeByPartition: maxByPartition },
      now,
    );
    const timing = this.compiled.timing.join!;
    const combined = combinedEventTime(clocks, now, timing.dimensionIdleTimeoutMs);
    const allIdle = combined.partitions.length > 0 && combined.partitions.every((p) => p.idle);
    const eventTime =
      allIdle && sourceTime && (!combined.eventTime || sourceTime > combined.eventTime)
        ? sourceTime
        : combined.eventTime;
    const previous = cp.watermark ? new Date(cp.watermark) : null;
    const end = { ...committed, ...endOffsetsOf(ranges) };
    const backlog = partitions.reduce(
      (n, p) => n + Math.max(0, p.high - (end[String(p.partition)] ?? p.low)),
      0,
    );
    return {
      changes,
      deadLetters,
      records: records.length,
      endOffsets: end,
      clocks,
      watermark: nextWatermark(previous, eventTime, timing.dimensionDelayMs),
      backlog,
    };
  }

  close(): Promise<void> {
    return this.source.close();
  }

  /** Whether the changelog has records this join has not read (a batch should run even without source input). */
  async hasUnread(cp: DimensionCheckpoint): Promise<boolean> {
    const partitions = await this.source.partitionOffsets();
    const committed = cp.endOffsets ?? {};
    return partitions.some(
      (p) =>
        (!this.dim.kafka.partitions || this.dim.kafka.partitions.includes(p.partition)) &&
        p.high > (committed[String(p.partition)] ?? p.low),
    );
  }
}
