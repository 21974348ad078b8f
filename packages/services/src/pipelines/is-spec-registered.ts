// Whether a spec (by its canonical hash) is the live version of its pipeline already: starting or
// running it then registers nothing, so it is a lifecycle action, not a registration.
import type { PrismaClient } from "@sluice/db";

export async function isSpecRegistered(
  db: PrismaClient,
  pipeline: string,
  specHash: string,
): Promise<boolean> {
  return (
    (await db.pipelineVersion.count({
      where: { pipeline: { name: pipeline }, specHash, supersededById: null },
    })) > 0
  );
}
