// The newest stored reconciliation of blue against green (rollout_reconciliations), or null before
// the first one — what the rollout page and the promotion request show. A spec with several outputs
// has one row per output per run: findLatestReconciliations gives the newest of each output.
import type pg from "pg";
import type { TReconciliationReport } from "./reconciliation-report";
import type { TStoredReconciliation } from "./run-reconciliation";

type TRow = {
  id: string;
  output: string;
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
};

const COLUMNS = `id, output, status, only_blue, only_green, differing, report, error, requested_by, started_at, finished_at, duration_ms`;

/** The newest of one output (`output` given: "" for a spec's only sink), or of any output. */
export async function findLatestReconciliation(
  db: pg.Pool | pg.PoolClient,
  blueVersionId: string,
  greenVersionId: string,
  output?: string,
): Promise<TStoredReconciliation | null> {
  const res = await db.query<TRow>(
    `SELECT ${COLUMNS} FROM rollout_reconciliations
      WHERE blue_version_id = $1 AND green_version_id = $2 AND ($3::text IS NULL OR output = $3)
      ORDER BY started_at DESC, id DESC LIMIT 1`,
    [blueVersionId, greenVersionId, output ?? null],
  );
  const r = res.rows[0];
  return r ? stored(r, blueVersionId, greenVersionId) : null;
}

/** The newest reconciliation of each output the two versions were reconciled on, by output name. */
export async function findLatestReconciliations(
  db: pg.Pool | pg.PoolClient,
  blueVersionId: string,
  greenVersionId: string,
): Promise<TStoredReconciliation[]> {
  const res = await db.query<TRow>(
    `SELECT DISTINCT ON (output) ${COLUMNS} FROM rollout_reconciliations
      WHERE blue_version_id = $1 AND green_version_id = $2
      ORDER BY output, started_at DESC, id DESC`,
    [blueVersionId, greenVersionId],
  );
  return res.rows.map((r) => stored(r, blueVersionId, greenVersionId));
}

function stored(r: TRow, blueVersionId: string, greenVersionId: string): TStoredReconciliation {
  const count = (v: string | null) => (v === null ? null : Number(v));
  return {
    id: Number(r.id),
    blueVersionId,
    greenVersionId,
    output: r.output,
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
