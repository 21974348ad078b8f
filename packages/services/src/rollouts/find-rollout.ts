// A pipeline's current rollout — the running one, else the newest — with both versions' numbers.
import type { Prisma, PrismaClient } from "@sluice/db";

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

/** null when the pipeline has no rollout (or no such pipeline). `lock`: FOR UPDATE, inside a transaction. */
export async function findRollout(
  db: TDb,
  pipeline: string,
  opts: { lock?: boolean } = {},
): Promise<TRolloutView | null> {
  const rows = await db.$queryRawUnsafe<
    {
      id: bigint;
      pipeline_id: string;
      state: TRolloutView["state"];
      blue: string;
      blue_version: number;
      green: string;
      green_version: number;
      serving: string | null;
      starting_from: unknown;
      started_by: string;
      started_at: Date;
      reason: string;
      promotion_request_id: bigint | null;
      decided_by: string | null;
      decided_at: Date | null;
      decision_reason: string;
      keep_previous_hours: number;
      previous_dropped_at: Date | null;
    }[]
  >(
    `SELECT r.id, r.pipeline_id, r.state, r.blue_version_id AS blue, b.version AS blue_version, r.green_version_id AS green,
            g.version AS green_version, p.serving_version_id AS serving, r.starting_from, r.started_by, r.started_at, r.reason,
            r.promotion_request_id, r.decided_by, r.decided_at, r.decision_reason, r.keep_previous_hours, r.previous_dropped_at
       FROM rollouts r JOIN pipelines p ON p.id = r.pipeline_id
       JOIN pipeline_versions b ON b.id = r.blue_version_id JOIN pipeline_versions g ON g.id = r.green_version_id
      WHERE p.name = $1
      ORDER BY (r.state = 'running') DESC, r.started_at DESC, r.id DESC LIMIT 1${opts.lock ? " FOR UPDATE OF r" : ""}`,
    pipeline,
  );
  const r = rows[0];
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
