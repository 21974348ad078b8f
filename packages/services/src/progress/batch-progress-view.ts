// Reading the engine's progress record (batch_log.progress, its schema in @sluice/engine
// store/progress-record.ts) for people. The column is JSON written by whichever engine version
// committed the batch; the engine's reader keeps the fields that match and leaves out the others, so
// a field a record does not have (older records have no `stale`, `preparedAhead`, `lateAccepted` or
// `partitionEventTime`) or a malformed one reads as 0 / none here and never breaks the page.
import { readProgressRecord, ZOutcomeCounts, type BatchProgress, type OutcomeCounts } from "@sluice/engine";
import {
  joinProgressView,
  outputProgressViews,
  type TJoinProgressView,
  type TOutputProgressView,
} from "./combine-progress-view";

/** An ISO time as the record keeps it, or null when absent or not a time. */
function instant(s: string | null | undefined): Date | null {
  if (!s) return null;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d;
}

export type TOutcomeCounts = OutcomeCounts;

/** One partition as the batch saw it: the offsets it read (if any) and its event-time clock (if any). */
export interface TPartitionProgress {
  partition: number;
  /** Offsets read in this batch, [start, end); null when the batch read nothing from the partition. */
  startOffset: number | null;
  endOffset: number | null;
  /** The partition's high watermark when the batch was planned. */
  latestOffset: number | null;
  /** Highest event time read from the partition so far; null when it has no clock (no event time yet). */
  eventTimeMax: Date | null;
  /** When (the runner's clock) a batch last read a record from it. */
  lastDataAt: Date | null;
  /** Idle when the batch ran: no data for the spec's `eventTime.idleTimeout`, so it no longer holds the watermark back. null without a clock. */
  idle: boolean | null;
}

export interface TBatchProgressView {
  batchId: number;
  committedAt: Date;
  /** The record's own time (when the batch finished processing); the commit time when it has none. */
  timestamp: Date;
  inputRows: number;
  inputRowsPerSecond: number;
  processedRowsPerSecond: number;
  durationMs: { plan: number; read: number; process: number; commit: number; total: number } | null;
  backlog: number | null;
  watermark: Date | null;
  eventTimeMax: Date | null;
  stateRows: number;
  stateBytes: number;
  outcomes: TOutcomeCounts;
  /** Violations per expectation (warn: kept; drop: dropped). */
  expectations: Record<string, number>;
  replayed: boolean;
  /** A dead-letter replay batch (no Kafka range): which replay requests, how many rows. */
  deadLetterReplay: { replayIds: number[]; rows: number } | null;
  preparedAhead: boolean;
  /** A partition group's batch (source.kafka.parallelism): which group of how many. */
  group: { no: number; of: number } | null;
  lateAccepted: number;
  /** By partition number: offsets read and event-time clocks merged. */
  partitions: TPartitionProgress[];
  /** Windows / CDC / webhook: what the operator did. */
  operator: Record<string, number | string> | null;
  /** End-to-end latency of the batch's rows, Kafka append time → commit (ms); null for older records or no rows. */
  latencyMs: { p50: number; p95: number; p99: number; max: number } | null;
  /** The newest Kafka append time the batch committed. */
  ingestTimeMax: Date | null;
  /** Several outputs, or the one sink behind a join: each output's sink, watermark, outcomes and state; [] otherwise. */
  outputs: TOutputProgressView[];
  /** A join: joined, at the bound, missing, dead-lettered, waiting for the dimension; null without one. */
  join: TJoinProgressView | null;
}

export interface TBatchLogRow {
  batchId: bigint | number;
  committedAt: Date;
  inputRows: number;
  sinkRows: number;
  outcomes: unknown;
  progress: unknown;
}

/** The batch_log columns batchProgressView reads, as a Prisma select. */
export const BATCH_LOG_ROW_SELECT = {
  batchId: true,
  committedAt: true,
  inputRows: true,
  sinkRows: true,
  outcomes: true,
  progress: true,
} as const;

/** A batch_log row as the console shows it. */
export function batchProgressView(row: TBatchLogRow): TBatchProgressView {
  const p = readProgressRecord(row.progress);
  // The outcomes column and the record's copy are written together; prefer the record's, fall back to the column.
  const outcomes = p.outcomes ?? columnOutcomes(row);
  return {
    batchId: Number(row.batchId),
    committedAt: row.committedAt,
    timestamp: instant(p.timestamp) ?? row.committedAt,
    inputRows: row.inputRows,
    inputRowsPerSecond: nonNegative(p.inputRowsPerSecond),
    processedRowsPerSecond: nonNegative(p.processedRowsPerSecond),
    durationMs: p.durationMs ?? null,
    backlog: p.backlog ?? null,
    watermark: instant(p.watermark),
    eventTimeMax: instant(p.eventTimeMax),
    stateRows: nonNegative(p.stateRows),
    stateBytes: nonNegative(p.stateBytes),
    outcomes,
    expectations: p.expectations ?? {},
    replayed: p.replayed ?? false,
    deadLetterReplay: p.deadLetterReplay ?? null,
    preparedAhead: p.preparedAhead ?? false,
    group: p.group ?? null,
    lateAccepted: nonNegative(p.lateAccepted),
    partitions: mergePartitions(p.sources ?? [], p.partitionEventTime ?? []),
    operator: p.operator ?? null,
    latencyMs: p.latencyMs ?? null,
    ingestTimeMax: instant(p.ingestTimeMax),
    outputs: outputProgressViews(p.outputs),
    join: joinProgressView(p.join),
  };
}

/** A count as people read it: 0 when the record has none (or a negative or fractional one). */
function nonNegative(n: number | undefined): number {
  return n !== undefined && Number.isInteger(n) && n >= 0 ? n : 0;
}

function columnOutcomes(row: TBatchLogRow): OutcomeCounts {
  const column = ZOutcomeCounts.safeParse(row.outcomes);
  return column.success ? column.data : ZOutcomeCounts.parse({ sink: row.sinkRows });
}

function mergePartitions(
  sources: BatchProgress["sources"],
  clocks: NonNullable<BatchProgress["partitionEventTime"]>,
): TPartitionProgress[] {
  const byPartition = new Map<number, TPartitionProgress>();
  const entry = (partition: number) => {
    let e = byPartition.get(partition);
    if (!e)
      byPartition.set(
        partition,
        (e = {
          partition,
          startOffset: null,
          endOffset: null,
          latestOffset: null,
          eventTimeMax: null,
          lastDataAt: null,
          idle: null,
        }),
      );
    return e;
  };
  for (const s of sources)
    Object.assign(entry(s.partition), {
      startOffset: s.startOffset,
      endOffset: s.endOffset,
      latestOffset: s.latestOffset,
    });
  for (const c of clocks)
    Object.assign(entry(c.partition), {
      eventTimeMax: instant(c.eventTimeMax),
      lastDataAt: instant(c.lastDataAt),
      idle: c.idle,
    });
  return [...byPartition.values()].sort((a, b) => a.partition - b.partition);
}
