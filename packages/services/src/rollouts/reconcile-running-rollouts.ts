// The workers' periodic reconciliation (workers/src/scheduling/rollout-reconciler.ts): every running
// rollout, one after another, so the rollout page, the fleet and the promotion rule always have a
// recent comparison — a green whose bug shows only later is caught before anyone approves it. Every
// worker runs the pass; a rollout another worker is reconciling is skipped (its advisory lock), and
// one reconciled less than `freshForMs` ago too, so more workers do not mean more reconciliations.
import type { PrismaClient } from "@sluice/db";
import type pg from "pg";
import { findRollout } from "./find-rollout";
import { reconcileRolloutIfIdle, type TRolloutReconciliation } from "./reconcile-rollout";

/** Who the stored rows name as having asked. */
export const SYSTEM_RECONCILER = { actorUserId: null, actor: "system:rollout" } as const;

export interface TReconcilePass {
  reconciled: TRolloutReconciliation[];
  /** Pipelines skipped: being reconciled elsewhere, or reconciled recently. */
  skipped: string[];
  /** Pipelines whose reconciliation threw (a lost connection): nothing stored for them this pass. */
  failed: { pipeline: string; error: string }[];
}

export async function reconcileRunningRollouts(
  pool: pg.Pool,
  db: PrismaClient,
  opts: { freshForMs: number },
): Promise<TReconcilePass> {
  const running = await pool.query<{ pipeline: string; last: Date | null }>(
    `SELECT p.name AS pipeline,
            (SELECT max(c.started_at) FROM rollout_reconciliations c
              WHERE c.blue_version_id = r.blue_version_id AND c.green_version_id = r.green_version_id) AS last
       FROM rollouts r JOIN pipelines p ON p.id = r.pipeline_id
      WHERE r.state = 'running' ORDER BY r.started_at, r.id`,
  );
  const pass: TReconcilePass = { reconciled: [], skipped: [], failed: [] };
  for (const { pipeline, last } of running.rows) {
    if (last && Date.now() - last.getTime() < opts.freshForMs) {
      pass.skipped.push(pipeline);
      continue;
    }
    try {
      // Read again: it may have been promoted or aborted since the list was read.
      const rollout = await findRollout(db, pipeline);
      if (rollout?.state !== "running") continue;
      const done = await reconcileRolloutIfIdle(pool, rollout, SYSTEM_RECONCILER);
      if (done) pass.reconciled.push(done);
      else pass.skipped.push(pipeline);
    } catch (err) {
      pass.failed.push({ pipeline, error: (err as Error).message });
    }
  }
  return pass;
}
