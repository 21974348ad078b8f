// Every running rollout's phase for the fleet, in one query: the fleet shows a pipeline once, with its
// rollout state on the serving row ("green catching up 62%", "ready to promote", "differences
// found"), instead of a second row for green. The same phase rules as the rollout page (rollout-phase.ts).
import { Prisma, type PrismaClient } from "@sluice/db";
import { checkpointJoinSql } from "@sluice/engine";
import { rolloutPhase, rolloutProgress, summarizeReconciliations, type TRolloutPhase } from "./rollout-phase";

export interface TFleetRollout {
  id: string;
  greenVersion: number;
  phase: TRolloutPhase;
  label: string;
}

/** Pipeline name → its running rollout. */
export async function findRunningRollouts(db: PrismaClient): Promise<Map<string, TFleetRollout>> {
  // Raw: the engine owns `checkpoints`, and its join comes as SQL text (checkpointJoinSql) a builder cannot splice in.
  const rows = await db.$queryRaw<
    {
      name: string;
      id: bigint;
      starting_from: { offsets?: Record<string, number> } | null;
      green_version: number;
      green_status: string | null;
      blue_offsets: Record<string, number> | null;
      green_offsets: Record<string, number> | null;
      /** The newest reconciliation of each output. */
      recs: {
        status: string;
        only_blue: number | null;
        only_green: number | null;
        differing: number | null;
      }[];
      promotion_id: bigint | null;
    }[]
  >`
    SELECT p.name, r.id, r.starting_from, g.version AS green_version, gr.status::text AS green_status,
           bc.end_offsets AS blue_offsets, gc.end_offsets AS green_offsets,
           COALESCE(rec.recs, '[]'::json) AS recs,
           (SELECT cr.id FROM change_requests cr
             WHERE cr.kind = 'promotion' AND cr.pipeline_version_id = r.green_version_id
               AND cr.status IN ('pending', 'approved')
             ORDER BY cr.created_at DESC LIMIT 1) AS promotion_id
      FROM rollouts r
      JOIN pipelines p ON p.id = r.pipeline_id
      JOIN pipeline_versions g ON g.id = r.green_version_id
      LEFT JOIN pipeline_runs gr ON gr.pipeline_version_id = r.green_version_id
      ${Prisma.raw(checkpointJoinSql("bc", "r.blue_version_id"))}
      ${Prisma.raw(checkpointJoinSql("gc", "r.green_version_id"))}
      LEFT JOIN LATERAL (
        SELECT json_agg(json_build_object('status', l.status, 'only_blue', l.only_blue,
                                          'only_green', l.only_green, 'differing', l.differing)) AS recs
          FROM (SELECT DISTINCT ON (rr.output) rr.status, rr.only_blue, rr.only_green, rr.differing
                  FROM rollout_reconciliations rr
                 WHERE rr.blue_version_id = r.blue_version_id AND rr.green_version_id = r.green_version_id
                 ORDER BY rr.output, rr.started_at DESC, rr.id DESC) l) rec ON true
     WHERE r.state = 'running'`;
  return new Map(
    rows.map((r) => {
      const progress = rolloutProgress(
        r.starting_from?.offsets ?? {},
        r.blue_offsets ?? {},
        r.green_offsets ?? {},
      );
      const { phase, label } = rolloutPhase({
        state: "running",
        greenVersion: r.green_version,
        greenStatus: r.green_status ?? "stopped",
        progress,
        reconciliation: summarizeReconciliations(
          r.recs.map((x) => ({
            status: x.status,
            onlyBlue: x.only_blue,
            onlyGreen: x.only_green,
            differing: x.differing,
          })),
        ),
        promotionRequestId: r.promotion_id === null ? null : String(r.promotion_id),
      });
      return [r.name, { id: String(r.id), greenVersion: r.green_version, phase, label }];
    }),
  );
}
