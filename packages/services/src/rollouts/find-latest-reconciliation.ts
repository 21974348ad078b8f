// The newest stored reconciliation of blue against green (rollout_reconciliations), or null before
// the first one — what the rollout page and the promotion request show.
import type pg from "pg";
import type { TReconciliationReport } from "./reconciliation-report";
import type { TStoredReconciliation } from "./run-reconciliation";

export async function findLatestReconciliation(
  db: pg.Pool | pg.PoolClient,
  blueVersionId: string,
  greenVersionId: string,
): Promise<TStoredReconciliation | null> {
  const res = await db.query<{
    id: string;
    status: TStoredReconciliation["status"];
    only_blue: string | null;
    only_green: string | null;
    differing: string | null;
    report: TReconciliationReport | null;
    error: string | null;
    requested_by: string;
    started_at: Date;
    finished_at: Date;
    duration_ms: number;
  }>(
    `SELECT id, status, only_blue, only_green, differing, report, error, requested_by, started_at, finished_at, duration_ms
       FROM rollout_reconciliations WHERE blue_version_id = $1 AND green_version_id = $2
      ORDER BY started_at DESC, id DESC LIMIT 1`,
    [blueVersionId, greenVersionId],
  );
  const r = res.rows[0];
  if (!r) return null;
  const count = (v: string | null) => (v === null ? null : Number(v));
  return {
    id: Number(r.id),
    blueVersionId,
    greenVersionId,
    status: r.status,
    onlyBlue: count(r.only_blue),
    onlyGreen: count(r.only_green),
    differing: count(r.differing),
    report: r.report,
    error: r.error,
    requestedBy: r.requested_by,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    durationMs: r.duration_ms,
  };
}
