// The worker: a BullMQ Worker whose jobs are dispatched by name to handlers. BullMQ gives
// at-least-once delivery, retries and stalled-job recovery; correctness never depends on it
// (the engine's Postgres fencing makes re-runs harmless).
import { Worker, type Job } from "bullmq";
import { Redis } from "ioredis";
import type { Logger } from "./logger";
import type { WorkerMetrics } from "./metrics";

export type JobHandler = (data: unknown, job: Job) => Promise<unknown>;

export interface SluiceWorkerOptions {
  redisUrl: string;
  queue: string;
  concurrency: number;
  handlers: Record<string, JobHandler>;
  logger: Logger;
  metrics: WorkerMetrics;
  /** A job whose lock is not renewed for this long is stalled and handed to another worker. Default 30 s. */
  lockDurationMs?: number;
  /** How often a job may stall (its worker died) before BullMQ gives up on it. Default 1. */
  maxStalledCount?: number;
  /** Delay before retry n of a job whose backoff type is not a built-in one. */
  backoffStrategy?: (attemptsMade: number) => number;
}

export interface SluiceWorker {
  /** Stop taking jobs, let in-flight ones finish, close connections. `force`: do not wait for them. */
  close(force?: boolean): Promise<void>;
  /** Jobs running now. */
  activeJobs(): number;
}

export function startSluiceWorker(opts: SluiceWorkerOptions): SluiceWorker {
  const { logger, metrics, handlers } = opts;
  // BullMQ requires maxRetriesPerRequest: null on connections used for blocking commands.
  const connection = new Redis(opts.redisUrl, { maxRetriesPerRequest: null });

  let active = 0;
  const worker = new Worker(
    opts.queue,
    async (job) => {
      active++;
      metrics.activeJobs.inc();
      const started = Date.now();
      try {
        const handler = handlers[job.name];
        if (!handler)
          throw new Error(`no handler for job "${job.name}" (known: ${Object.keys(handlers).join(", ")})`);
        const result = await handler(job.data, job);
        metrics.jobsCompleted.inc({ job: job.name });
        logger.info({ job: job.name, jobId: job.id, ms: Date.now() - started }, "job completed");
        return result;
      } catch (err) {
        metrics.jobsFailed.inc({ job: job.name });
        logger.error({ job: job.name, jobId: job.id, err }, "job failed");
        throw err;
      } finally {
        active--;
        metrics.activeJobs.dec();
      }
    },
    {
      connection,
      concurrency: opts.concurrency,
      ...(opts.lockDurationMs
        ? {
            lockDuration: opts.lockDurationMs,
            stalledInterval: Math.max(1000, Math.round(opts.lockDurationMs / 2)),
          }
        : {}),
      ...(opts.maxStalledCount !== undefined ? { maxStalledCount: opts.maxStalledCount } : {}),
      ...(opts.backoffStrategy ? { settings: { backoffStrategy: opts.backoffStrategy } } : {}),
    },
  );
  worker.on("error", (err) => logger.error({ err }, "worker error"));

  return {
    async close(force = false) {
      await worker.close(force);
      await connection.quit().catch(() => connection.disconnect());
    },
    activeJobs: () => active,
  };
}
