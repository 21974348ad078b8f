// The fleet's first read: every pipeline with its serving version (pipelines.serving_version_id), that version's run state
// and event-time clock, and the spec's targets — in one statement. (Prisma's nested findMany issued a
// query per relation and shipped every whole spec; the fleet needs only `targets` from it.) Any other
// version of a pipeline that is not stopped (running, pausing, paused, failed — e.g. the previous one
// left running beside a version with fresh state) is a row of its own, so that nothing runs unseen.
import { Prisma, type PrismaClient } from "@sluice/db";
import { checkpointJoinSql } from "@sluice/engine";
import type { TDesiredState, TRunStatus } from "../runs/run-state";

export interface TFleetVersionRow {
  name: string;
  description: string;
  team_slug: string;
  team_name: string;
  /** The serving version; null when the pipeline has none. */
  pv: string | null;
  version: number | null;
  /** false for another version that is not stopped (a row of its own, after the serving one). */
  serving: boolean;
  /** `{ targets }` of the spec (what targetsOf reads). */
  spec_targets: { targets?: unknown } | null;
  status: TRunStatus | null;
  desired_state: TDesiredState | null;
  last_error: string | null;
  last_error_at: Date | null;
  run_updated_at: Date | null;
  event_time_max: string | null;
}

export function queryFleetVersions(db: PrismaClient): Promise<TFleetVersionRow[]> {
  // Left raw: the event-time clock is a join on the engine's checkpoints table, SQL the engine owns (checkpointJoinSql).
  return db.$queryRaw<TFleetVersionRow[]>`
    SELECT p.name, p.description, t.slug AS team_slug, t.name AS team_name, v.id AS pv, v.version,
           coalesce(v.id = s.id, true) AS serving,
           CASE WHEN v.id IS NULL THEN NULL ELSE jsonb_build_object('targets', v.spec->'targets') END AS spec_targets,
           r.status::text AS status, r.desired_state::text AS desired_state, r.last_error, r.last_error_at, r.updated_at AS run_updated_at,
           c.event_time_max->>'eventTime' AS event_time_max
      FROM pipelines p JOIN teams t ON t.id = p.owner_team_id
      LEFT JOIN pipeline_versions s ON s.id = p.serving_version_id
      LEFT JOIN LATERAL (
            SELECT pv.id, pv.version, pv.spec FROM pipeline_versions pv
              LEFT JOIN pipeline_runs pr ON pr.pipeline_version_id = pv.id
             WHERE pv.pipeline_id = p.id
               AND (pv.id = s.id OR (pr.pipeline_version_id IS NOT NULL AND (pr.status <> 'stopped' OR pr.desired_state <> 'stopped')))
           ) v ON true
      LEFT JOIN pipeline_runs r ON r.pipeline_version_id = v.id
      ${Prisma.raw(checkpointJoinSql("c", "v.id"))}
     ORDER BY p.name, v.version DESC`;
}
