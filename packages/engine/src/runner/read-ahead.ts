// Overlapping batches: while Postgres commits batch N, the runner plans, reads and processes batch
// N+1 against the state N is committing, so Node's work and Postgres' work run side by side instead
// of taking turns (docs/performance.md). Nothing of N+1 is written until N has committed and N+1's
// plan is recorded; if N does not commit, or the checkpoint is not the one N was to write, the
// batch read ahead is dropped and N+1 is planned, read and processed again on its turn.
//
// What N+1 is processed against is exactly what it would see after N's commit:
//   - the watermark N commits (late data is judged against it);
//   - dedup state = committed keys that N's eviction keeps ∪ the keys N inserts (minus those N evicts).
import { contractColumns, type TCompiledSpec } from "@sluice/pipeline-spec";
import { processBatch, type ProcessedBatch } from "../batch/process-batch";
import { planBatch } from "../plan/plan-batch";
import type { OffsetRange, PartitionOffsets, RecordSource, SourceRecord } from "../source/source";
import type { Checkpoint } from "../store/checkpoint-store";
import type { EngineLogger } from "./engine-logger";
import type { CommitReplay } from "../store/commit-batch";
import type { ReplayPlan } from "../store/replay-store";

/** A batch planned, read and processed, ready for its operator and commit. */
export interface PreparedBatch {
  batchId: number;
  ranges: OffsetRange[];
  skipped: Record<string, number>;
  /** Partition offsets when the batch was planned (backlog in the progress record). */
  partitions: PartitionOffsets[];
  records: SourceRecord[];
  processed: ProcessedBatch;
  /** The plan was recorded before (a planned-but-uncommitted batch re-run). */
  replayed: boolean;
  /** Read and processed while the previous batch committed. */
  preparedAhead: boolean;
  phases: { plan: number; read: number; process: number };
  /** A dead-letter replay batch: the items it applies, each row's verdict (per item id). */
  deadLetterReplay?: CommitReplay & { plan: ReplayPlan };
}

export interface AheadInput {
  batchId: number;
  /** The batch committing now (batchId − 1, or batchId − N for a partition group's striped ids). */
  previousBatchId: number;
  /**
   * A partition group's batch: its commit merges its time into the version's, which other groups
   * move too, so the watermark committed may be newer than `after.watermark`. The batch read ahead
   * judged lateness by an older watermark then — as a batch processed just before another group's
   * commit does — and still fits; only a committed watermark older than it does not.
   */
  watermarkMayMoveOn?: boolean;
  /** The checkpoint the commit in flight writes. */
  after: {
    endOffsets: Record<string, number>;
    watermark: Date | null;
    evictBefore: Date | null;
    /** Several outputs or a join: rows before this are late for every output (runner/result-step.ts). */
    lateBefore?: Date | null;
  };
  source: RecordSource;
  compiled: TCompiledSpec;
  /** Keys the commit in flight adds to dedup state. */
  pendingKeys: { key: string; time: Date }[];
  /** Committed dedup keys among these, ignoring those with a time before `notBefore` (the commit in flight evicts them). */
  lookupCommitted(keys: string[], notBefore: Date | null): Promise<Set<string>>;
  logger: EngineLogger;
}

export interface ReadAhead {
  batch: PreparedBatch;
  /** Whether the committed checkpoint is the one this batch was prepared after. */
  matches(cp: Checkpoint): boolean;
}

/** Prepare the next batch now; resolves undefined (never rejects) when there is nothing worth preparing or it failed. */
export async function readAhead(input: AheadInput): Promise<ReadAhead | undefined> {
  const { spec } = input.compiled;
  try {
    let t = Date.now();
    const partitions = await input.source.partitionOffsets();
    const plan = planBatch({
      committedEnd: input.after.endOffsets,
      partitions,
      maxOffsetsPerTrigger: spec.source.kafka.maxOffsetsPerTrigger,
    });
    // Only a full batch (catching up on a backlog). With less waiting, the next trigger should take
    // whatever arrives until then rather than a range fixed now.
    if (plan.ranges.reduce((n, r) => n + r.to - r.from, 0) < spec.source.kafka.maxOffsetsPerTrigger)
      return undefined;
    const planMs = Date.now() - t;

    t = Date.now();
    const records = await input.source.read(plan.ranges);
    const readMs = Date.now() - t;

    t = Date.now();
    const { evictBefore } = input.after;
    const pending = new Set(
      input.pendingKeys.filter((k) => !evictBefore || k.time >= evictBefore).map((k) => k.key),
    );
    const processed = await processBatch(records, {
      compiled: input.compiled,
      columns: contractColumns(spec),
      watermark: input.after.watermark,
      ...(input.after.lateBefore !== undefined ? { lateBefore: input.after.lateBefore } : {}),
      lookupSeenKeys: async (keys) => {
        const seen = await input.lookupCommitted(keys, evictBefore);
        for (const k of keys) if (pending.has(k)) seen.add(k);
        return seen;
      },
    });
    // A `fail` expectation: prepared again on its turn, which records the failure and stops.
    if (processed.failures.length > 0) return undefined;
    const batch: PreparedBatch = {
      batchId: input.batchId,
      ranges: plan.ranges,
      skipped: plan.skipped,
      partitions,
      records,
      processed,
      replayed: false,
      preparedAhead: true,
      phases: { plan: planMs, read: readMs, process: Date.now() - t },
    };
    const { after } = input;
    return {
      batch,
      matches: (cp) =>
        cp.lastBatchId === input.previousBatchId &&
        sameOffsets(cp.endOffsets, after.endOffsets) &&
        (input.watermarkMayMoveOn && after.watermark !== null && cp.watermark !== null
          ? cp.watermark >= after.watermark
          : (cp.watermark?.getTime() ?? null) === (after.watermark?.getTime() ?? null)),
    };
  } catch (err) {
    // Harmless (the batch is read on its turn, and fails there if something is really wrong): debug only.
    input.logger.debug?.(
      { err: (err as Error).message, batchId: input.batchId },
      "reading the next batch ahead failed; it is read on its turn",
    );
    return undefined;
  }
}

function sameOffsets(a: Record<string, number>, b: Record<string, number>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (Number(a[k]) !== Number(b[k])) return false;
  return true;
}
