// One batch for the drill-down page: what it planned (offset log), what it committed (its progress
// record in full: offsets per partition with the latest at plan time, outcomes, phases, watermark
// before and after, state after, read ahead or replayed), its dead letters by outcome — or, for a batch
// that stopped the pipeline and was never committed, its failure.
import type { PrismaClient } from "@sluice/db";
import { findPlannedBatch } from "@sluice/engine";
import { z } from "zod";
import { prismaSqlClient } from "../change-requests/prisma-sql-client";
import { findPipelineVersion } from "../pipelines/find-pipeline-version";
import { batchProgressView, type TBatchProgressView } from "./batch-progress-view";

export const ZGetBatchDetailInput = z.object({
  pipeline: z.string().min(1).max(200),
  version: z.number().int().positive().optional(),
  batchId: z.number().int().nonnegative(),
});
export type TGetBatchDetailInput = z.input<typeof ZGetBatchDetailInput>;

export interface TBatchDetail {
  pipeline: string;
  version: number;
  batchId: number;
  /** The planned ranges [from, to) per partition; null when the plan is no longer in the offset log. */
  plan: { partition: number; from: number; to: number }[] | null;
  plannedAt: Date | null;
  /** null when the batch was not committed (planned, in flight, or failed). */
  committed: TBatchProgressView | null;
  /** The watermark after the previous batch (what this one started from). */
  watermarkBefore: Date | null;
  previousBatchId: number | null;
  nextBatchId: number | null;
  deadLetters: { outcome: string; count: number }[];
  failures: { kind: string; rule: string | null; rowCount: number; message: string; at: Date }[];
}

const ZRanges = z
  .array(z.object({ partition: z.number().int(), from: z.number(), to: z.number() }))
  .catch([]);

/** null when there is no such pipeline, version or batch (neither planned, committed nor failed). */
export async function getBatchDetail(
  db: PrismaClient,
  input: TGetBatchDetailInput,
): Promise<TBatchDetail | null> {
  const { pipeline, version, batchId } = ZGetBatchDetailInput.parse(input);
  const ref = await findPipelineVersion(db, pipeline, version);
  if (!ref?.version) return null;
  const pv = ref.version.id;
  const [row, plan, previous, next, deadLetters, failures] = await Promise.all([
    db.batchLog.findUnique({ where: { pipelineVersionId_batchId: { pipelineVersionId: pv, batchId } } }),
    findPlannedBatch(prismaSqlClient(db), pv, batchId),
    db.batchLog.findFirst({
      where: { pipelineVersionId: pv, batchId: { lt: batchId } },
      orderBy: { batchId: "desc" },
      select: { batchId: true, progress: true },
    }),
    db.batchLog.findFirst({
      where: { pipelineVersionId: pv, batchId: { gt: batchId } },
      orderBy: { batchId: "asc" },
      select: { batchId: true },
    }),
    db.deadLetter.groupBy({
      by: ["outcome"],
      where: { pipelineVersionId: pv, batchId },
      _count: { _all: true },
    }),
    db.batchFailure.findMany({
      where: { pipelineVersionId: pv, batchId },
      orderBy: { id: "desc" },
      take: 10,
    }),
  ]);
  if (!row && !plan && failures.length === 0) return null;
  const before = previous
    ? batchProgressView({
        batchId: previous.batchId,
        committedAt: new Date(0),
        inputRows: 0,
        sinkRows: 0,
        outcomes: null,
        progress: previous.progress,
      })
    : null;
  return {
    pipeline: ref.pipeline,
    version: ref.version.version,
    batchId,
    plan: plan ? ZRanges.parse(plan.ranges) : null,
    plannedAt: plan?.plannedAt ?? null,
    committed: row ? batchProgressView(row) : null,
    watermarkBefore: before?.watermark ?? null,
    previousBatchId: previous ? Number(previous.batchId) : null,
    nextBatchId: next ? Number(next.batchId) : null,
    deadLetters: deadLetters
      .map((d) => ({ outcome: d.outcome, count: d._count._all }))
      .sort((a, b) => a.outcome.localeCompare(b.outcome)),
    failures: failures.map((f) => ({
      kind: f.kind,
      rule: f.rule,
      rowCount: f.rowCount,
      message: f.message,
      at: f.createdAt,
    })),
  };
}
