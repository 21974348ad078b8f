// The turns whose batch jobs should be queued right now: what the workers' reconciler compares with
// the queue after Redis lost its data (or a job was lost some other way). A version read in partition
// groups has one turn per group once its run turn has fanned out (run-groups.ts), and until then the
// run turn itself.
import { rowsOf, sql, tables, type PrismaClient } from "@sluice/db";
import { groupTurn, partitionGroupsSql } from "./run-groups";
import type { TScheduledRun } from "./scheduled-turn";

export async function findScheduledRuns(
  db: PrismaClient,
  pipelineVersionId?: string,
): Promise<TScheduledRun[]> {
  const only = pipelineVersionId
    ? sql<boolean>`r.pipeline_version_id = ${pipelineVersionId}`
    : sql<boolean>`true`;
  const runs = await rowsOf(
    db,
    tables
      .selectFrom("pipeline_runs as r")
      .innerJoin("pipeline_versions as v", "v.id", "r.pipeline_version_id")
      .select([
        "r.pipeline_version_id",
        "r.schedule_seq",
        "r.next_batch_at",
        sql<number>`${sql.raw(partitionGroupsSql("v.spec"))}`.as("groups"),
      ])
      .where("r.status", "=", "running")
      .where(only)
      .orderBy("r.pipeline_version_id"),
  );
  const groups = await rowsOf(
    db,
    tables
      .selectFrom("pipeline_run_groups as g")
      .innerJoin("pipeline_runs as r", (j) =>
        j
          .onRef("r.pipeline_version_id", "=", "g.pipeline_version_id")
          .onRef("r.schedule_seq", "=", "g.run_seq"),
      )
      .select(["g.pipeline_version_id", "g.group_no", "g.schedule_seq", "g.next_batch_at"])
      .where("r.status", "=", "running")
      .where("g.drained", "=", false)
      .where(only)
      .orderBy("g.group_no"),
  );
  return runs.flatMap((r): TScheduledRun[] => {
    const mine = r.groups > 1 ? groups.filter((g) => g.pipeline_version_id === r.pipeline_version_id) : [];
    if (mine.length === 0)
      return [
        { pipelineVersionId: r.pipeline_version_id, seq: r.schedule_seq, nextBatchAt: r.next_batch_at },
      ];
    return mine.map((g) => groupTurn(r.pipeline_version_id, r.schedule_seq, r.groups, g));
  });
}

/** The current turn of one version — of one of its partition groups, given its number — or null when it is not running. */
export async function getScheduledRun(
  db: PrismaClient,
  pipelineVersionId: string,
  groupNo?: number,
): Promise<TScheduledRun | null> {
  const turns = await findScheduledRuns(db, pipelineVersionId);
  return turns.find((t) => t.group?.no === groupNo) ?? null;
}
