// A pipeline's current rollout — the running one, else the newest — with both versions' numbers.
import { firstRowOf, tables, type Prisma, type PrismaClient } from "@sluice/db";

export interface TRolloutView {
  id: bigint;
  pipeline: string;
  pipelineId: string;
  state: "running" | "promoted" | "rolled_back" | "aborted";
  blue: { pipelineVersionId: string; version: number };
  green: { pipelineVersionId: string; version: number };
  /** The version readers are served now. */
  servingVersionId: string | null;
  startingFrom: unknown;
  startedBy: string;
  startedAt: Date;
  reason: string;
  promotionRequestId: bigint | null;
  decidedBy: string | null;
  decidedAt: Date | null;
  decisionReason: string;
  keepPreviousHours: number;
  /** Promoted or rolled back: until when the side that stopped keeps its state and tables (a rollback needs them). */
  keptUntil: Date | null;
  /** When that side was retired — its state deleted and its tables dropped. */
  previousDroppedAt: Date | null;
}

type TDb = PrismaClient | Prisma.TransactionClient;

/** Rollouts `r` with their pipeline `p` and both versions, `b` (blue) and `g` (green): where every rollout read starts. */
export const rolloutsWithVersions = () =>
  tables
    .selectFrom("rollouts as r")
    .innerJoin("pipelines as p", "p.id", "r.pipeline_id")
    .innerJoin("pipeline_versions as b", "b.id", "r.blue_version_id")
    .innerJoin("pipeline_versions as g", "g.id", "r.green_version_id");

/** null when the pipeline has no rollout (or no such pipeline). `lock`: FOR UPDATE, inside a transaction. */
export async function findRollout(
  db: TDb,
  pipeline: string,
  opts: { lock?: boolean } = {},
): Promise<TRolloutView | null> {
  const r = await firstRowOf(
    db,
    rolloutsWithVersions()
      .select([
        "r.id",
        "r.pipeline_id",
        "r.state",
        "r.blue_version_id as blue",
        "b.version as blue_version",
        "r.green_version_id as green",
        "g.version as green_version",
        "p.serving_version_id as serving",
        "r.starting_from",
        "r.started_by",
        "r.started_at",
        "r.reason",
        "r.promotion_request_id",
        "r.decided_by",
        "r.decided_at",
        "r.decision_reason",
        "r.keep_previous_hours",
        "r.previous_dropped_at",
      ])
      .where("p.name", "=", pipeline)
      .orderBy((eb) => eb("r.state", "=", "running"), "desc")
      .orderBy("r.started_at", "desc")
      .orderBy("r.id", "desc")
      .limit(1)
      .$if(opts.lock === true, (q) => q.forUpdate("r"))
      .$narrowType<{ state: TRolloutView["state"] }>(),
  );
  if (!r) return null;
  return {
    id: r.id,
    pipeline,
    pipelineId: r.pipeline_id,
    state: r.state,
    blue: { pipelineVersionId: r.blue, version: r.blue_version },
    green: { pipelineVersionId: r.green, version: r.green_version },
    servingVersionId: r.serving,
    startingFrom: r.starting_from,
    startedBy: r.started_by,
    startedAt: r.started_at,
    reason: r.reason,
    promotionRequestId: r.promotion_request_id,
    decidedBy: r.decided_by,
    decidedAt: r.decided_at,
    decisionReason: r.decision_reason,
    keepPreviousHours: r.keep_previous_hours,
    keptUntil:
      r.decided_at && (r.state === "promoted" || r.state === "rolled_back")
        ? new Date(r.decided_at.getTime() + r.keep_previous_hours * 3_600_000)
        : null,
    previousDroppedAt: r.previous_dropped_at,
  };
}
