// The workers' side of alerting: a BullMQ job scheduler fires `alerts.evaluate` every interval on a
// queue of its own; whichever worker takes the job runs one tick (@sluice/services runAlertEvaluation:
// it takes the Postgres lease over, bumping the fencing epoch, so a previous tick still in flight
// elsewhere cannot commit after it) and then delivers the outbox.
// Redis holds no alert state: every worker re-upserts the scheduler each interval, so after a FLUSHALL
// or a Redis restart the job comes back within one interval, and the episodes are all in Postgres.
import type { PrismaClient } from "@sluice/db";
import {
  deliverAlertNotifications,
  RULE_KINDS,
  releaseAlertLease,
  runAlertEvaluation,
  type TAlertEvaluationResult,
  type TSmtpOptions,
} from "@sluice/services";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import type { Logger } from "../logger";
import { singleFlight, startPeriodicLoop } from "../periodic-loop";
import { JOB_ALERTS_EVALUATE } from "@sluice/queue";

/** Every rule but no_worker_alive, which a worker cannot evaluate (the console's watchdog does). */
const WORKER_KINDS = RULE_KINDS.filter((k) => k !== "no_worker_alive");

export interface AlertEvaluator {
  /** One tick now, in this process (tests): evaluate if the lease is ours, then deliver. */
  tick(): Promise<TAlertEvaluationResult>;
  /** Re-create the job scheduler in Redis (idempotent). */
  ensureScheduled(): Promise<void>;
  close(): Promise<void>;
}

export function startAlertEvaluator(opts: {
  db: PrismaClient;
  redisUrl: string;
  queueName: string;
  workerId: string;
  intervalMs: number;
  retryBaseMs: number;
  publicUrl: string | null;
  smtp: TSmtpOptions | null;
  env: (name: string) => string | undefined;
  logger: Logger;
  onTick?: (
    result: TAlertEvaluationResult,
    delivery: { delivered: number; retrying: number; failed: number },
  ) => void;
}): AlertEvaluator {
  const { db, logger } = opts;
  const queueConnection = new Redis(opts.redisUrl, { maxRetriesPerRequest: null });
  const workerConnection = new Redis(opts.redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(opts.queueName, { connection: queueConnection });
  // The lease's expiry matters only to evaluators that do not take over (the console's watchdog).
  const leaseMs = Math.max(3 * opts.intervalMs, 5000);

  async function pass(): Promise<TAlertEvaluationResult> {
    // The job is this worker's turn: it takes the lease over (a previous holder's tick in flight is fenced off).
    const result = await runAlertEvaluation(db, {
      evaluator: "workers",
      owner: opts.workerId,
      leaseMs,
      kinds: WORKER_KINDS,
      takeover: true,
    });
    // Only the evaluator of this tick delivers.
    const delivery = result.evaluated
      ? await deliverAlertNotifications(db, {
          env: opts.env,
          publicUrl: opts.publicUrl,
          smtp: opts.smtp,
          retryBaseMs: opts.retryBaseMs,
        })
      : { delivered: 0, retrying: 0, failed: 0 };
    if (result.evaluated && (result.opened || result.resolved || result.queued))
      logger.info({ ...result, epoch: String(result.epoch), ...delivery }, "alerts evaluated");
    if (delivery.retrying || delivery.failed)
      logger.warn(delivery, "alert notifications not delivered (see the Alerts page)");
    opts.onTick?.(result, delivery);
    return result;
  }
  // BullMQ runs one job at a time here (concurrency 1); a test's tick() joins a job's tick in flight.
  const ticks = singleFlight(pass);
  const tick = ticks.run;

  const worker = new Worker(
    opts.queueName,
    async (job) => {
      if (job.name !== JOB_ALERTS_EVALUATE)
        throw new Error(`no handler for job "${job.name}" on the alerts queue`);
      const r = await tick();
      return r.evaluated
        ? { evaluated: true, opened: r.opened, resolved: r.resolved, queued: r.queued }
        : { evaluated: false };
    },
    { connection: workerConnection, concurrency: 1 },
  );
  worker.on("error", (err) => logger.error({ err }, "alert evaluator worker error"));

  async function ensureScheduled(): Promise<void> {
    await queue.upsertJobScheduler(
      JOB_ALERTS_EVALUATE,
      { every: opts.intervalMs },
      { name: JOB_ALERTS_EVALUATE, opts: { removeOnComplete: 100, removeOnFail: 100 } },
    );
  }
  const keepScheduled = startPeriodicLoop({
    pass: ensureScheduled,
    intervalMs: opts.intervalMs,
    immediate: true,
    onError: (err) => logger.warn({ err }, "could not schedule the alert evaluation; retrying"),
  });

  return {
    tick,
    ensureScheduled,
    async close() {
      await keepScheduled.stop();
      await worker.close().catch(() => undefined);
      await ticks.idle();
      await releaseAlertLease(db, "workers", opts.workerId).catch(() => undefined);
      await queue.close().catch(() => undefined);
      await queueConnection.quit().catch(() => queueConnection.disconnect());
      await workerConnection.quit().catch(() => workerConnection.disconnect());
    },
  };
}
