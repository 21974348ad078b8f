// A pipeline by name and its latest registered version: what the console's pipeline page is about.
import type { PrismaClient } from "@sluice/db";

export interface TLatestVersionRef {
  pipelineId: string;
  pipeline: string;
  /** null when the pipeline has no version yet. */
  version: { id: string; version: number; createdAt: Date } | null;
}

/** null when there is no pipeline of that name. */
export async function findLatestVersion(db: PrismaClient, name: string): Promise<TLatestVersionRef | null> {
  const pipeline = await db.pipeline.findUnique({
    where: { name },
    select: { id: true, name: true, versions: { orderBy: { version: "desc" }, take: 1, select: { id: true, version: true, createdAt: true } } },
  });
  if (!pipeline) return null;
  return { pipelineId: pipeline.id, pipeline: pipeline.name, version: pipeline.versions[0] ?? null };
}
