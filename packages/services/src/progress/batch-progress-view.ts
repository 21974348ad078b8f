// Reading the engine's progress record (batch_log.progress, written by packages/engine/src/runner/
// progress.ts) for people. The column is JSON written by whichever engine version committed the batch,
// so it is parsed leniently: a counter a record does not have reads as 0 (older records have no
// `stale`, `preparedAhead`, `lateAccepted` or `partitionEventTime`), a malformed one never breaks the page.
import { z } from "zod";

const count = z.number().int().nonnegative().catch(0);
const counts = z.record(z.string(), z.number()).catch({});
const instant = z
  .string()
  .nullish()
  .transform((s) => (s ? new Date(s) : null))
  .transform((d) => (d && !Number.isNaN(d.getTime()) ? d : null))
  .catch(null);

const ZOutcomes = z.object({
  sink: count,
  duplicate: count,
  filtered: count,
  quarantined: count,
  deadLetter: count,
  late: count,
  stale: count,
  dropped: counts,
});

const ZProgress = z.object({
  timestamp: instant,
  inputRowsPerSecond: count,
  processedRowsPerSecond: count,
  durationMs: z
    .object({ plan: count, read: count, process: count, commit: count, total: count })
    .nullable()
    .catch(null),
  sources: z
    .array(
      z.object({
        partition: z.number().int(),
        startOffset: z.number(),
        endOffset: z.number(),
        latestOffset: z.number(),
      }),
    )
    .catch([]),
  backlog: z.number().nullable().catch(null),
  watermark: instant,
  eventTimeMax: instant,
  stateRows: count,
  stateBytes: count,
  outcomes: ZOutcomes.nullable().catch(null),
  expectations: counts,
  replayed: z.boolean().catch(false),
  deadLetterReplay: z
    .object({ replayIds: z.array(z.number().int()), rows: z.number().int() })
    .nullable()
    .catch(null),
  preparedAhead: z.boolean().catch(false),
  lateAccepted: count,
  partitionEventTime: z
    .array(
      z.object({
        partition: z.number().int(),
        eventTimeMax: instant,
        lastDataAt: instant,
        idle: z.boolean(),
      }),
    )
    .catch([]),
  operator: z
    .record(z.string(), z.union([z.number(), z.string()]))
    .nullable()
    .catch(null),
  latencyMs: z
    .object({ p50: z.number(), p95: z.number(), p99: z.number(), max: z.number() })
    .nullable()
    .catch(null),
  ingestTimeMax: instant,
});

export type TOutcomeCounts = z.infer<typeof ZOutcomes>;

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
  lateAccepted: number;
  /** By partition number: offsets read and event-time clocks merged. */
  partitions: TPartitionProgress[];
  /** Windows / CDC / webhook: what the operator did. */
  operator: Record<string, number | string> | null;
  /** End-to-end latency of the batch's rows, Kafka append time → commit (ms); null for older records or no rows. */
  latencyMs: { p50: number; p95: number; p99: number; max: number } | null;
  /** The newest Kafka append time the batch committed. */
  ingestTimeMax: Date | null;
}

export interface TBatchLogRow {
  batchId: bigint | number;
  committedAt: Date;
  inputRows: number;
  sinkRows: number;
  outcomes: unknown;
  progress: unknown;
}

/** A batch_log row as the console shows it. */
export function batchProgressView(row: TBatchLogRow): TBatchProgressView {
  const parsed = ZProgress.safeParse(row.progress);
  const p = parsed.success ? parsed.data : ZProgress.parse({});
  // The outcomes column and the record's copy are written together; prefer the record's, fall back to the column.
  const outcomes =
    p.outcomes ??
    ZOutcomes.nullable().catch(null).parse(row.outcomes) ??
    ZOutcomes.parse({ sink: row.sinkRows });
  return {
    batchId: Number(row.batchId),
    committedAt: row.committedAt,
    timestamp: p.timestamp ?? row.committedAt,
    inputRows: row.inputRows,
    inputRowsPerSecond: p.inputRowsPerSecond,
    processedRowsPerSecond: p.processedRowsPerSecond,
    durationMs: p.durationMs,
    backlog: p.backlog,
    watermark: p.watermark,
    eventTimeMax: p.eventTimeMax,
    stateRows: p.stateRows,
    stateBytes: p.stateBytes,
    outcomes,
    expectations: p.expectations,
    replayed: p.replayed,
    deadLetterReplay: p.deadLetterReplay,
    preparedAhead: p.preparedAhead,
    lateAccepted: p.lateAccepted,
    partitions: mergePartitions(p.sources, p.partitionEventTime),
    operator: p.operator,
    latencyMs: p.latencyMs,
    ingestTimeMax: p.ingestTimeMax,
  };
}

function mergePartitions(
  sources: { partition: number; startOffset: number; endOffset: number; latestOffset: number }[],
  clocks: { partition: number; eventTimeMax: Date | null; lastDataAt: Date | null; idle: boolean }[],
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
      eventTimeMax: c.eventTimeMax,
      lastDataAt: c.lastDataAt,
      idle: c.idle,
    });
  return [...byPartition.values()].sort((a, b) => a.partition - b.partition);
}
