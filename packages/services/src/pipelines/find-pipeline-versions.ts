// Every version of a pipeline for the version selector — superseded and blue/green ones too, so any
// version's history is reachable without its spec file.
import type { PrismaClient } from "@sluice/db";
import { runPhase, type TRunPhase } from "../runs/run-state";

export interface TPipelineVersionSummary {
  version: number;
  createdAt: Date;
  /** The version that took this one's place; null for a live version. */
  supersededBy: number | null;
  /** null when never started on the workers. */
  phase: TRunPhase | null;
  lastBatchId: number | null;
  /** The serving version (pipelines.serving_version_id). */
  serving: boolean;
}

/** null when there is no pipeline of that name. Newest first. */
export async function findPipelineVersions(
  db: PrismaClient,
  name: string,
): Promise<TPipelineVersionSummary[] | null> {
  const p = await db.pipeline.findUnique({
    where: { name },
    select: {
      servingVersionId: true,
      versions: {
        orderBy: { version: "desc" },
        select: {
          id: true,
          version: true,
          createdAt: true,
          supersededById: true,
          run: { select: { status: true, desiredState: true } },
          checkpoint: { select: { lastBatchId: true } },
        },
      },
    },
  });
  if (!p) return null;
  const numberOf = new Map(p.versions.map((v) => [v.id, v.version]));
  return p.versions.map((v) => ({
    version: v.version,
    createdAt: v.createdAt,
    supersededBy: v.supersededById ? (numberOf.get(v.supersededById) ?? null) : null,
    phase: v.run ? runPhase(v.run.status, v.run.desiredState) : null,
    lastBatchId: v.checkpoint && v.checkpoint.lastBatchId >= 0n ? Number(v.checkpoint.lastBatchId) : null,
    serving: v.id === p.servingVersionId,
  }));
}
