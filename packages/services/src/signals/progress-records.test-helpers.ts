// Progress records committed into batch_log as the engine commits them (the rollup trigger folds each
// in the same transaction), for the tests of the series and alerts read from the rollups.
import type { PrismaClient } from "@sluice/db";
import { emptyOutputOutcomes, type BatchProgress, type OutputProgress } from "@sluice/engine";

/** The batch_log row of a progress record, committed at `committedAt`. */
export async function insertProgressRecord(
  db: PrismaClient,
  p: BatchProgress,
  committedAt: Date,
): Promise<void> {
  await db.batchLog.create({
    data: {
      pipelineVersionId: p.pipelineVersionId,
      batchId: p.batchId,
      committedAt,
      inputRows: p.inputRows,
      sinkRows: p.outcomes.sink,
      outcomes: p.outcomes as object,
      progress: p as object,
    },
  });
}

/** One output's part of a record: `rows` reached it, `late` of them were late for it, the rest written. */
export function outputProgress(
  name: string,
  o: { rows: number; late?: number; stateRows?: number; watermark?: Date | null },
): OutputProgress {
  const late = o.late ?? 0;
  return {
    name,
    sink: `${name}_5m`,
    watermark: o.watermark === undefined || o.watermark === null ? null : o.watermark.toISOString(),
    outcomes: { ...emptyOutputOutcomes(o.rows), sink: o.rows - late, late },
    lateAccepted: 0,
    expectations: {},
    stateRows: o.stateRows ?? 0,
    stateBytes: (o.stateRows ?? 0) * 40,
  };
}

/** A batch of `input` rows, all reaching every output (late for all of them counts as the pipeline's late). */
export async function commitOutputsBatch(
  db: PrismaClient,
  pv: string,
  batchId: number,
  committedAt: Date,
  outputs: OutputProgress[] | undefined,
  input = 100,
): Promise<BatchProgress> {
  const lateForAll = outputs && outputs.length > 0 ? Math.min(...outputs.map((o) => o.outcomes.late)) : 0;
  const p: BatchProgress = {
    batchId,
    pipelineVersionId: pv,
    timestamp: committedAt.toISOString(),
    inputRows: input,
    inputRowsPerSecond: 50,
    processedRowsPerSecond: 400,
    durationMs: { plan: 1, read: 10, process: 10, commit: 10, total: 31 },
    sources: [
      {
        partition: 0,
        startOffset: batchId * input,
        endOffset: (batchId + 1) * input,
        latestOffset: (batchId + 1) * input,
      },
    ],
    backlog: 0,
    skippedOffsets: {},
    watermark: new Date(committedAt.getTime() - 60_000).toISOString(),
    eventTimeMax: committedAt.toISOString(),
    stateRows: (outputs ?? []).reduce((n, o) => n + o.stateRows, 0),
    stateBytes: (outputs ?? []).reduce((n, o) => n + o.stateBytes, 0),
    expectations: {},
    replayed: false,
    outcomes: {
      sink: input - lateForAll,
      duplicate: 0,
      filtered: 0,
      quarantined: 0,
      deadLetter: 0,
      late: lateForAll,
      stale: 0,
      dropped: {},
    },
    ...(outputs ? { outputs } : {}),
  };
  await insertProgressRecord(db, p, committedAt);
  return p;
}
