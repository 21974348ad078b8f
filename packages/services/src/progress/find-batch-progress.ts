// A pipeline's latest version as the engine reports it: the newest progress record in full, and the
// recent batches as one row each (batch_log, the commit log: a row means the batch was committed).
import type { PrismaClient } from "@sluice/db";
import { z } from "zod";
import { findPipelineVersion } from "../pipelines/find-pipeline-version";
import { BATCH_LOG_ROW_SELECT, batchProgressView, type TBatchProgressView } from "./batch-progress-view";
import type { TOutputProgressView } from "./combine-progress-view";

export const ZFindBatchProgressInput = z.object({
  pipeline: z.string().min(1).max(200),
  /** A version number; the serving version when absent. */
  version: z.number().int().positive().optional(),
  limit: z.number().int().min(1).max(100).default(20),
});
export type TFindBatchProgressInput = z.input<typeof ZFindBatchProgressInput>;

/** One committed batch in the history table. */
export interface TBatchSummary {
  batchId: number;
  committedAt: Date;
  inputRows: number;
  durationMs: number | null;
  sink: number;
  duplicate: number;
  quarantined: number;
  deadLetter: number;
  late: number;
  backlog: number | null;
  watermark: Date | null;
  preparedAhead: boolean;
  replayed: boolean;
  /** A partition group's batch: which group of how many (its backlog is the group's partitions'). */
  group: { no: number; of: number } | null;
  /** A dead-letter replay batch: which replay requests. */
  deadLetterReplay: { replayIds: number[]; rows: number } | null;
  /**
   * Several outputs (or the one sink behind a join), in the record's order: what each did in the batch —
   * rows that reached it, rows it wrote, its own late count (a row late for one output may count in
   * another; `late` above is only rows late for every output) and its state after the batch. [] otherwise.
   */
  outputs: TBatchOutputSummary[];
  /** A join: rows waiting for the dimension after the batch; null without one. */
  joinWaiting: number | null;
}

/** One output of a batch as Recent batches shows it: the view's counts, and its written and late rows. */
export type TBatchOutputSummary = Pick<TOutputProgressView, "name" | "rows" | "stateRows" | "stateBytes"> & {
  /** Rows it wrote (its `sink` outcome). */
  sink: number;
  late: number;
};

export interface TBatchProgress {
  pipeline: string;
  /** The latest version's number; null when the pipeline has no version yet. */
  version: number | null;
  /** The newest committed batch's progress record; null before the first commit. */
  latest: TBatchProgressView | null;
  /** At most `limit`, newest first. */
  batches: TBatchSummary[];
}

/** null when there is no pipeline of that name. */
export async function findBatchProgress(
  db: PrismaClient,
  input: TFindBatchProgressInput,
): Promise<TBatchProgress | null> {
  const { pipeline: name, version, limit } = ZFindBatchProgressInput.parse(input);
  const ref = await findPipelineVersion(db, name, version);
  if (!ref) return null;
  if (!ref.version) return { pipeline: ref.pipeline, version: null, latest: null, batches: [] };
  const rows = await db.batchLog.findMany({
    where: { pipelineVersionId: ref.version.id },
    orderBy: { batchId: "desc" },
    take: limit,
    select: BATCH_LOG_ROW_SELECT,
  });
  const views = rows.map(batchProgressView);
  return {
    pipeline: ref.pipeline,
    version: ref.version.version,
    latest: views[0] ?? null,
    batches: views.map(summaryOf),
  };
}

function summaryOf(b: TBatchProgressView): TBatchSummary {
  return {
    batchId: b.batchId,
    committedAt: b.committedAt,
    inputRows: b.inputRows,
    durationMs: b.durationMs?.total ?? null,
    sink: b.outcomes.sink,
    duplicate: b.outcomes.duplicate,
    quarantined: b.outcomes.quarantined,
    deadLetter: b.outcomes.deadLetter,
    late: b.outcomes.late,
    backlog: b.backlog,
    watermark: b.watermark,
    preparedAhead: b.preparedAhead,
    replayed: b.replayed,
    group: b.group,
    deadLetterReplay: b.deadLetterReplay,
    outputs: b.outputs.map((o) => ({
      name: o.name,
      rows: o.rows,
      sink: o.outcomes.sink,
      late: o.outcomes.late,
      stateRows: o.stateRows,
      stateBytes: o.stateBytes,
    })),
    joinWaiting: b.join ? b.join.waiting : null,
  };
}
