// The progress record a batch commits to batch_log.progress (shaped like Spark's StreamingQueryProgress):
// its one schema. The engine builds the record as this schema's type (runner/progress.ts) and readers
// parse it with readProgressRecord — services' progress views, charts and the CLI — so the record
// that is written and the record that is read cannot drift apart. The column holds whatever the
// engine version that committed the batch wrote, so reading is lenient: fields added since (stale,
// preparedAhead, lateAccepted, partitionEventTime, latencyMs, …) are optional, an outcome count a
// record lacks reads as 0, and a malformed field is left out instead of failing the whole record.
import { z } from "zod";
import { ZOutcomeCounts } from "../batch/outcomes";
import type { JoinReport } from "../join/join-operator";
import type { OutputProgress } from "../output/output-progress";

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const counts = z.record(z.string(), z.number());

export const ZBatchProgress = z.object({
  batchId: z.number().int(),
  pipelineVersionId: z.string(),
  /** When the batch finished processing (ISO). */
  timestamp: z.string(),
  inputRows: z.number().int(),
  inputRowsPerSecond: z.number(),
  processedRowsPerSecond: z.number(),
  durationMs: z.object({
    plan: z.number(),
    read: z.number(),
    process: z.number(),
    commit: z.number(),
    total: z.number(),
  }),
  sources: z.array(
    z.object({
      partition: z.number().int(),
      startOffset: z.number(),
      endOffset: z.number(),
      latestOffset: z.number(),
    }),
  ),
  backlog: z.number(),
  skippedOffsets: counts,
  watermark: z.string().nullable(),
  eventTimeMax: z.string().nullable(),
  stateRows: z.number(),
  stateBytes: z.number(),
  outcomes: ZOutcomeCounts,
  /** Violations per expectation (warn: kept; drop: dropped). */
  expectations: counts,
  replayed: z.boolean(),
  /** A dead-letter replay batch (no Kafka range; offsets and watermark unchanged): which requests, how many rows. */
  deadLetterReplay: z.object({ replayIds: z.array(z.number().int()), rows: z.number().int() }).optional(),
  /** A partition group's batch (source.kafka.parallelism): which group of how many; its sources and backlog are the group's. */
  group: z.object({ no: z.number().int(), of: z.number().int() }).optional(),
  /** Read and processed while the previous batch committed (its read and process time overlapped that commit). */
  preparedAhead: z.boolean().optional(),
  /** Rows behind the watermark but within allowedLateness that still updated their window (counted in sink). */
  lateAccepted: z.number().optional(),
  /** Per partition: max event time, last data, and whether it is idle (idle partitions do not hold the watermark). */
  partitionEventTime: z
    .array(
      z.object({
        partition: z.number().int(),
        eventTimeMax: z.string(),
        lastDataAt: z.string(),
        idle: z.boolean(),
      }),
    )
    .optional(),
  /** Windows / CDC / webhook: what the operator did in this batch. */
  operator: z.record(z.string(), z.union([z.number(), z.string()])).optional(),
  /** End-to-end latency of the batch's rows, Kafka append time → this commit (ms); absent for a batch without rows. */
  latencyMs: z.object({ p50: z.number(), p95: z.number(), p99: z.number(), max: z.number() }).optional(),
  /** The newest Kafka append time among the batch's rows: how fresh the data it committed is. */
  ingestTimeMax: z.string().optional(),
  /** A pipeline with several outputs or a join: each output's outcomes, watermark, state and operator. */
  outputs: z.custom<OutputProgress[]>((v) => Array.isArray(v)).optional(),
  /** A join: rows joined, at the bound, missing, waiting; the dimension's changes and watermark. */
  join: z.custom<JoinReport>(isObject).optional(),
});
export type BatchProgress = z.output<typeof ZBatchProgress>;

/**
 * A stored progress record, field by field: each field that matches the schema, none that does not
 * (a record that is not an object reads as no fields). Readers fall back per field — to the batch_log
 * columns, or to "unknown".
 */
export function readProgressRecord(stored: unknown): Partial<BatchProgress> {
  if (!isObject(stored)) return {};
  const read: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(ZBatchProgress.shape)) {
    const parsed = field.safeParse(stored[name]);
    if (parsed.success && parsed.data !== undefined) read[name] = parsed.data;
  }
  // Every key was parsed by its own field's schema just above.
  return read as Partial<BatchProgress>;
}
