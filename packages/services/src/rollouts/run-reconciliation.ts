// Run a reconciliation and store its report (rollout_reconciliations), or why it failed — so the
// rollout page, the fleet and the promotion request read the latest one instead of recomputing it,
// and anyone can run it again (a new row; the newest is the current one).
import type pg from "pg";
import { reconcileSinks } from "./reconcile-sinks";
import type { TReconcileInput, TReconciliationReport, TReconciliationStatus } from "./reconciliation-report";

export interface TStoredReconciliation {
  id: number;
  blueVersionId: string;
  greenVersionId: string;
  /** The output compared, for a spec with several; "" for a spec's only sink. */
  output: string;
  status: TReconciliationStatus | "failed";
  /** Keys only in blue / only in green / differing (null unless compared). */
  onlyBlue: number | null;
  onlyGreen: number | null;
  differing: number | null;
  report: TReconciliationReport | null;
  error: string | null;
  requestedBy: string;
  startedAt: Date;
  finishedAt: Date;
  durationMs: number;
}

/** Who asks: a person (their user id and email) or the system ("system:rollout"). */
export interface TReconciliationRequester {
  actorUserId: string | null;
  actor: string;
}

/**
 * Reconcile and store. A failure Postgres reports (a statement timeout, a table dropped meanwhile) is
 * stored as `failed` with its message and returned; anything else (a caller's mistake, such as an
 * invalid table name) is thrown and nothing is stored.
 */
export async function runReconciliation(
  pool: pg.Pool,
  input: TReconcileInput,
  who: TReconciliationRequester,
): Promise<TStoredReconciliation> {
  const startedAt = new Date();
  let report: TReconciliationReport | null = null;
  let error: string | null = null;
  try {
    report = await reconcileSinks(pool, input);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== "string") throw err;
    error =
      code === "57014"
        ? "the comparison ran longer than the reconciliation's statement timeout and was cancelled: run it again when the machine is less busy, or compare a shorter range (from)"
        : `Postgres refused the comparison (${code}): ${(err as Error).message}`;
  }
  return storeReconciliation(pool, input, who, { startedAt, report, error });
}

/**
 * Stores one reconciliation's outcome: a report, or why it failed (error). A rollout's reconciliation
 * stores what it could not even start (a spec that no longer validates) the same way, as `failed`.
 */
export async function storeReconciliation(
  pool: pg.Pool,
  input: { blue: { pipelineVersionId: string }; green: { pipelineVersionId: string; output?: string } },
  who: TReconciliationRequester,
  outcome: { startedAt: Date; report: TReconciliationReport | null; error: string | null },
): Promise<TStoredReconciliation> {
  const { startedAt, report, error } = outcome;
  const finishedAt = new Date();
  const output = input.green.output ?? "";
  const counts = report?.status === "compared" ? report.counts : null;
  const res = await pool.query<{ id: string }>(
    `INSERT INTO rollout_reconciliations (blue_version_id, green_version_id, output, status, only_blue, only_green, differing,
       report, error, requested_by_id, requested_by, started_at, finished_at, duration_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13, $14) RETURNING id`,
    [
      input.blue.pipelineVersionId,
      input.green.pipelineVersionId,
      output,
      report?.status ?? "failed",
      counts?.onlyBlue ?? null,
      counts?.onlyGreen ?? null,
      counts?.differing ?? null,
      report ? JSON.stringify(report) : null,
      error,
      who.actorUserId,
      who.actor,
      startedAt,
      finishedAt,
      finishedAt.getTime() - startedAt.getTime(),
    ],
  );
  return {
    id: Number(res.rows[0]!.id),
    blueVersionId: input.blue.pipelineVersionId,
    greenVersionId: input.green.pipelineVersionId,
    output,
    status: report?.status ?? "failed",
    onlyBlue: counts?.onlyBlue ?? null,
    onlyGreen: counts?.onlyGreen ?? null,
    differing: counts?.differing ?? null,
    report,
    error,
    requestedBy: who.actor,
    startedAt,
    finishedAt,
    durationMs: finishedAt.getTime() - startedAt.getTime(),
  };
}
