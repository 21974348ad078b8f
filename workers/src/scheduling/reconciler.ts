// Redis holds no truth. Every worker runs this loop (cheap: one query, one Redis call per running
// version): for each version Postgres says is running, the job of its current scheduling turn must
// exist in the queue and be able to run. After a FLUSHALL, a Redis restart without persistence or a
// lost job, the missing jobs are rebuilt within one interval. Several workers doing it at once is
// harmless: a turn's job id is deterministic, so the second add is a no-op.
import type { PrismaClient } from "@sluice/db";
import { findScheduledRuns, getScheduledRun } from "@sluice/services";
import type { BatchQueue, TEnsureTurnResult } from "@sluice/queue";
import type { Logger } from "../logger";
import { startPeriodicLoop } from "../periodic-loop";

export interface Reconciler {
  /** Run one pass now (also used by tests). Resolves with what changed. */
  tick(): Promise<Record<TEnsureTurnResult, number>>;
  /** No more passes; resolves when the pass in flight has finished. */
  stop(): Promise<void>;
}

const PARALLEL = 16;

export function startReconciler(opts: {
  db: PrismaClient;
  queue: BatchQueue;
  intervalMs: number;
  logger: Logger;
  onAction?: (action: TEnsureTurnResult) => void;
}): Reconciler {
  const { db, queue, logger } = opts;

  async function pass(): Promise<Record<TEnsureTurnResult, number>> {
    const counts: Record<TEnsureTurnResult, number> = {
      present: 0,
      added: 0,
      retried: 0,
      replaced: 0,
      "moved-on": 0,
    };
    const runs = await findScheduledRuns(db);
    for (let i = 0; i < runs.length; i += PARALLEL) {
      await Promise.all(
        runs.slice(i, i + PARALLEL).map(async (run) => {
          const action = await queue.ensureTurn(run, () =>
            getScheduledRun(db, run.pipelineVersionId, run.group?.no),
          );
          counts[action]++;
          if (action === "added" || action === "retried" || action === "replaced") {
            opts.onAction?.(action);
            logger.info(
              { pipelineVersionId: run.pipelineVersionId, seq: run.seq, group: run.group?.no, action },
              "reconciler rebuilt a batch job from Postgres",
            );
          }
        }),
      );
    }
    return counts;
  }

  return startPeriodicLoop({
    pass,
    intervalMs: opts.intervalMs,
    // Spreads the workers' passes over the interval.
    jitter: 0.25,
    // A worker that starts after a Redis loss rebuilds the jobs at once.
    immediate: true,
    onError: (err) => logger.warn({ err }, "reconciler pass failed; retrying next interval"),
  });
}
