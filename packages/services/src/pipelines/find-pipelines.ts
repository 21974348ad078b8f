// The fleet list: every registered pipeline with its owner team and latest spec version.
import type { PrismaClient } from "@sluice/db";

export interface TPipelineSummary {
  id: string;
  name: string;
  description: string;
  ownerTeam: { slug: string; name: string };
  /** Highest registered spec version; null if the pipeline has no version yet. */
  latestVersion: number | null;
  createdAt: Date;
}

export async function findPipelines(db: PrismaClient): Promise<TPipelineSummary[]> {
  const rows = await db.pipeline.findMany({
    orderBy: { name: "asc" },
    select: {
      id: true,
      name: true,
      description: true,
      createdAt: true,
      ownerTeam: { select: { slug: true, name: true } },
      versions: { orderBy: { version: "desc" }, take: 1, select: { version: true } },
    },
  });
  return rows.map(({ versions, ...p }) => ({ ...p, latestVersion: versions[0]?.version ?? null }));
}
