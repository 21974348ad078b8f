// The versions whose batches should be queued right now: what the workers' reconciler compares with
// the queue after Redis lost its data (or a job was lost some other way).
import type { PrismaClient } from "@sluice/db";

export interface TScheduledRun {
  pipelineVersionId: string;
  seq: number;
  /** When the current turn's batch is due; null while one is in flight. */
  nextBatchAt: Date | null;
}

export async function findScheduledRuns(db: PrismaClient): Promise<TScheduledRun[]> {
  const rows = await db.pipelineRun.findMany({
    where: { status: "running" },
    select: { pipelineVersionId: true, scheduleSeq: true, nextBatchAt: true },
    orderBy: { pipelineVersionId: "asc" },
  });
  return rows.map((r) => ({
    pipelineVersionId: r.pipelineVersionId,
    seq: r.scheduleSeq,
    nextBatchAt: r.nextBatchAt,
  }));
}

/** The current turn of one version, or null when it is not running. */
export async function getScheduledRun(
  db: PrismaClient,
  pipelineVersionId: string,
): Promise<TScheduledRun | null> {
  const r = await db.pipelineRun.findFirst({
    where: { pipelineVersionId, status: "running" },
    select: { scheduleSeq: true, nextBatchAt: true },
  });
  return r ? { pipelineVersionId, seq: r.scheduleSeq, nextBatchAt: r.nextBatchAt } : null;
}
