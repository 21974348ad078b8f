// Teams own pipelines and receive their alerts; the console lists them with their size.
import type { PrismaClient } from "@sluice/db";

export interface TTeamSummary {
  id: string;
  slug: string;
  name: string;
  memberCount: number;
  pipelineCount: number;
}

export async function findTeams(db: PrismaClient): Promise<TTeamSummary[]> {
  const rows = await db.team.findMany({
    orderBy: { name: "asc" },
    select: { id: true, slug: true, name: true, _count: { select: { members: true, pipelines: true } } },
  });
  return rows.map(({ _count, ...t }) => ({
    ...t,
    memberCount: _count.members,
    pipelineCount: _count.pipelines,
  }));
}
