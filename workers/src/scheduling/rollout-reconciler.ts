// Every worker reconciles the running blue/green rollouts every WORKER_ROLLOUT_RECONCILE_INTERVAL_MS
// (jittered), so the rollout page and the promotion rule read a recent comparison of blue and green
// (@sluice/services reconcileRunningRollouts: one rollout at a time, skipped when another worker is on
// it or did it within half an interval). A reconciliation that fails is stored as failed by the
// service; a pass that throws (Postgres unreachable) is logged and tried next interval, never thrown
// into the worker. The same pass retires the side a promotion or rollback stopped once the rollout's
// keeping time is over (@sluice/services retireKeptVersions; docs/rollouts.md).
import type { PrismaClient } from "@sluice/db";
import {
  reconcileRunningRollouts,
  retireKeptVersions,
  type TReconcilePass,
  type TRetiredVersion,
} from "@sluice/services";
import type pg from "pg";
import type { Logger } from "../logger";
import { startPeriodicLoop, type PeriodicLoop } from "../periodic-loop";

export type RolloutReconciler = PeriodicLoop<TReconcilePass & { retired: TRetiredVersion[] }>;

export function startRolloutReconciler(opts: {
  pool: pg.Pool;
  db: PrismaClient;
  intervalMs: number;
  logger: Logger;
}): RolloutReconciler {
  const { logger } = opts;
  return startPeriodicLoop({
    pass: async () => {
      const pass = await reconcileRunningRollouts(opts.pool, opts.db, { freshForMs: opts.intervalMs / 2 });
      for (const r of pass.reconciled)
        for (const c of r.reconciliations)
          logger.info(
            {
              pipeline: r.pipeline,
              rollout: r.rolloutId,
              output: c.output,
              status: c.status,
              onlyBlue: c.onlyBlue,
              onlyGreen: c.onlyGreen,
              differing: c.differing,
              ms: c.durationMs,
              ...(c.error ? { error: c.error } : {}),
            },
            "rollout reconciled",
          );
      for (const f of pass.failed)
        logger.warn(
          { pipeline: f.pipeline, err: f.error },
          "rollout reconciliation failed; retrying next interval",
        );
      const kept = await retireKeptVersions(opts.db);
      for (const r of kept.retired)
        logger.info(
          { pipeline: r.pipeline, rollout: r.rolloutId, version: r.version, dropped: r.dropped },
          "rollout's stopped version retired after its keeping time",
        );
      for (const f of kept.failed)
        logger.warn(
          { pipeline: f.pipeline, err: f.error },
          "retiring a kept version failed; retrying next interval",
        );
      return { ...pass, retired: kept.retired };
    },
    intervalMs: opts.intervalMs,
    jitter: 0.25,
    onError: (err) => logger.warn({ err }, "rollout reconciliation pass failed; retrying next interval"),
  });
}
