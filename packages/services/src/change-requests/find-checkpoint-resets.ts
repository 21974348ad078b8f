// The discontinuities in a pipeline's batch history: each applied checkpoint reset, after which batch,
// the offsets before and after, state kept or cleared, who asked and who approved, which request.
import type { PrismaClient } from "@sluice/db";

export interface TCheckpointResetView {
  changeRequestId: string;
  version: number;
  afterBatchId: number;
  offsetsBefore: Record<string, number>;
  offsetsAfter: Record<string, number>;
  stateCleared: boolean;
  requestedBy: string;
  approvedBy: string;
  at: Date;
}

export async function findCheckpointResets(
  db: PrismaClient,
  pipeline: string,
  limit = 20,
): Promise<TCheckpointResetView[]> {
  const versions = await db.pipelineVersion.findMany({
    where: { pipeline: { name: pipeline } },
    select: { id: true, version: true },
  });
  const byId = new Map(versions.map((v) => [v.id, v.version]));
  const rows = await db.checkpointReset.findMany({
    where: { pipelineVersionId: { in: [...byId.keys()] } },
    orderBy: { id: "desc" },
    take: limit,
  });
  return rows.map((r) => ({
    changeRequestId: String(r.changeRequestId),
    version: byId.get(r.pipelineVersionId) ?? 0,
    afterBatchId: Number(r.afterBatchId),
    offsetsBefore: r.offsetsBefore as Record<string, number>,
    offsetsAfter: r.offsetsAfter as Record<string, number>,
    stateCleared: r.stateCleared,
    requestedBy: r.requestedBy,
    approvedBy: r.approvedBy,
    at: r.createdAt,
  }));
}
