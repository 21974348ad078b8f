// Fixtures that create pipelines and versions directly (Prisma creates, not the engine's
// registerVersion) leave pipelines.serving_version_id unset, and without a serving version the fleet,
// alerts and the pipeline page show nothing. This names the serving version the way registering does
// for a version that is not a candidate: the newest one.
import type { PrismaClient } from "@sluice/db";

/** Makes the pipeline's newest version its serving version; returns that version's id. */
export async function serveNewestVersion(db: PrismaClient, pipelineId: string): Promise<string> {
  const newest = await db.pipelineVersion.findFirstOrThrow({
    where: { pipelineId },
    orderBy: { version: "desc" },
    select: { id: true },
  });
  await db.pipeline.update({ where: { id: pipelineId }, data: { servingVersionId: newest.id } });
  return newest.id;
}
