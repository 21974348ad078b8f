// A pipeline by name and one of its versions: the one asked for (any version, superseded ones too),
// else the serving version (pipelines.serving_version_id: the one readers of its sink tables see).
import type { PrismaClient } from "@sluice/db";

export interface TVersionRef {
  pipelineId: string;
  pipeline: string;
  /** null when the pipeline has no version yet, or not the one asked for. */
  version: { id: string; version: number; createdAt: Date; spec: unknown } | null;
}

/** null when there is no pipeline of that name. */
export async function findPipelineVersion(
  db: PrismaClient,
  name: string,
  version?: number,
): Promise<TVersionRef | null> {
  const p = await db.pipeline.findUnique({
    where: { name },
    select: {
      id: true,
      name: true,
      servingVersion: { select: { id: true, version: true, createdAt: true, spec: true } },
      versions: {
        where: { version: version ?? -1 },
        take: 1,
        select: { id: true, version: true, createdAt: true, spec: true },
      },
    },
  });
  if (!p) return null;
  const found = version === undefined ? p.servingVersion : p.versions[0];
  return { pipelineId: p.id, pipeline: p.name, version: found ?? null };
}
