// Wires one worker process: Postgres pool (shared by the engine and the control-plane client), Kafka,
// Redis, the BullMQ worker with its job handlers, warm runners, the reconciler, the heartbeat and the
// metrics endpoint. main.ts calls this with the parsed env; tests call it in-process.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { Redis } from "ioredis";
import { Kafka, logLevel, type LogEntry } from "kafkajs";
import { pipelineEnv, type TWorkerEnv } from "@sluice/config";
import { createPool, createPrismaClient } from "@sluice/db";
import {
  DEFAULT_MAX_UNFINISHED_ATTEMPTS,
  markWorkerStopped,
  recordWorkerHeartbeat,
  type TWorkerIdentity,
} from "@sluice/services";
import { batchRetryDelay, BatchQueue, JOB_BATCH_RUN, JOB_SYSTEM_ECHO } from "@sluice/queue";
import { createBatchRunHandler } from "./batches/batch-run-job";
import { createPipelineMetrics } from "./batches/pipeline-metrics";
import { RunnerPool } from "./batches/runner-pool";
import { handleSystemEcho } from "./jobs/system-echo";
import type { Logger } from "./logger";
import { createWorkerMetrics, serveMetrics, type WorkerMetrics } from "./metrics";
import { startAlertEvaluator, type AlertEvaluator } from "./alerts/alert-evaluator";
import { startHeartbeat } from "./scheduling/heartbeat";
import { startOffsetSampler, type OffsetSampler } from "./scheduling/offset-sampler";
import { startReconciler, type Reconciler } from "./scheduling/reconciler";
import { startRolloutReconciler, type RolloutReconciler } from "./scheduling/rollout-reconciler";
import { startSluiceWorker } from "./worker";

export type WorkerAppConfig = Pick<
  TWorkerEnv,
  | "DATABASE_URL"
  | "REDIS_URL"
  | "KAFKA_BROKERS"
  | "WORKER_QUEUE"
  | "WORKER_CONCURRENCY"
  | "WORKER_METRICS_PORT"
  | "WORKER_MAX_CONSECUTIVE_FAILURES"
  | "WORKER_RETRY_BASE_MS"
  | "WORKER_RECONCILE_INTERVAL_MS"
  | "WORKER_HEARTBEAT_INTERVAL_MS"
  | "WORKER_LOCK_DURATION_MS"
  | "WORKER_IDLE_RUNNER_MS"
  | "WORKER_PG_POOL_MAX"
> &
  Partial<
    Pick<
      TWorkerEnv,
      | "WORKER_METRICS_HOST"
      | "WORKER_OFFSET_SAMPLE_INTERVAL_MS"
      | "WORKER_MAX_UNFINISHED_ATTEMPTS"
      | "WORKER_ALERT_INTERVAL_MS"
      | "WORKER_ALERT_RETRY_BASE_MS"
      | "WORKER_ROLLOUT_RECONCILE_INTERVAL_MS"
      | "SLUICE_PUBLIC_URL"
      | "SLUICE_SMTP_URL"
      | "SLUICE_SMTP_FROM"
    >
  > & {
    /** Environment lookups for contact points' secret variables (default: this process's environment). */
    onCallEnv?: (name: string) => string | undefined;
  };

export interface WorkerApp {
  workerId: string;
  metricsPort: number;
  metrics: WorkerMetrics;
  reconciler: Reconciler;
  offsetSampler: OffsetSampler;
  rolloutReconciler: RolloutReconciler;
  alerts: AlertEvaluator;
  queue: BatchQueue;
  /**
   * Stop taking jobs and let in-flight batches commit, for at most `timeoutMs`; after that they are
   * abandoned — safe, because nothing of a batch is visible before its commit and its plan re-runs
   * elsewhere. Then close everything. Resolves with whether anything was abandoned.
   */
  close(timeoutMs: number): Promise<{ abandoned: boolean }>;
}

// How often a job may stall (its worker died mid-batch) before BullMQ gives up on it; the reconciler
// retries it even then, so this only bounds BullMQ's own bookkeeping.
const MAX_STALLED_COUNT = 20;

export async function startWorkerApp(env: WorkerAppConfig, logger: Logger): Promise<WorkerApp> {
  const workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  const log = logger.child({ workerId });
  const pool = createPool({
    connectionString: env.DATABASE_URL,
    max: env.WORKER_PG_POOL_MAX,
    onConnectionError: (err) => log.warn({ err: err.message }, "Postgres connection failed"),
  });
  const db = createPrismaClient(pool);
  const kafka = new Kafka({
    brokers: env.KAFKA_BROKERS,
    clientId: "sluice-worker",
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(log),
  });
  const connection = new Redis(env.REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new BatchQueue(env.WORKER_QUEUE, connection);

  const metrics = createWorkerMetrics();
  const pipelineMetrics = createPipelineMetrics(metrics.registry);
  const metricsServer = await serveMetrics(
    metrics.registry,
    env.WORKER_METRICS_PORT,
    env.WORKER_METRICS_HOST ?? "127.0.0.1",
  );
  const engineLogger = log.child({ component: "engine" });
  const runners = new RunnerPool({
    pool,
    kafka,
    logger: engineLogger,
    owner: workerId,
    env: pipelineEnv(),
    onOpen: (v, reason, ms) => {
      pipelineMetrics.recordOpen({ pipeline: v.pipeline, version: String(v.version) }, reason, ms);
      log.info(
        { pipelineVersionId: v.pipelineVersionId, pipeline: v.pipeline, reason, ms },
        "runner opened (lease taken)",
      );
    },
  });

  const identity: TWorkerIdentity = {
    id: workerId,
    host: hostname(),
    pid: process.pid,
    queue: env.WORKER_QUEUE,
    concurrency: env.WORKER_CONCURRENCY,
  };
  // Registered before taking jobs, so a batch's worker id always names a row in `workers`.
  await recordWorkerHeartbeat(db, identity, 0);

  const worker = startSluiceWorker({
    redisUrl: env.REDIS_URL,
    queue: env.WORKER_QUEUE,
    concurrency: env.WORKER_CONCURRENCY,
    handlers: {
      [JOB_SYSTEM_ECHO]: handleSystemEcho,
      [JOB_BATCH_RUN]: createBatchRunHandler({
        db,
        pool,
        runners,
        queue,
        metrics: pipelineMetrics,
        logger: log,
        workerId,
        maxConsecutiveFailures: env.WORKER_MAX_CONSECUTIVE_FAILURES,
        maxUnfinishedAttempts: env.WORKER_MAX_UNFINISHED_ATTEMPTS ?? DEFAULT_MAX_UNFINISHED_ATTEMPTS,
      }),
    },
    logger: log,
    metrics,
    lockDurationMs: env.WORKER_LOCK_DURATION_MS,
    maxStalledCount: MAX_STALLED_COUNT,
    backoffStrategy: (attemptsMade) => batchRetryDelay(attemptsMade, env.WORKER_RETRY_BASE_MS),
  });
  const heartbeat = startHeartbeat({
    db,
    identity,
    intervalMs: env.WORKER_HEARTBEAT_INTERVAL_MS,
    activeJobs: () => worker.activeJobs(),
    logger: log,
    onBeat: async () => {
      metrics.heartbeats.inc();
      metrics.lastHeartbeat.set(Date.now() / 1000);
      for (const v of await runners.evictIdle(env.WORKER_IDLE_RUNNER_MS))
        pipelineMetrics.dropGauges({ pipeline: v.pipeline, version: String(v.version) });
      const holders = await runners.leaseHolders();
      for (const v of runners.versions())
        if (holders.get(v.pipelineVersionId) === false)
          pipelineMetrics.dropGauges({ pipeline: v.pipeline, version: String(v.version) });
      metrics.warmRunners.set(runners.size);
    },
  });
  const reconciler = startReconciler({
    db,
    queue,
    intervalMs: env.WORKER_RECONCILE_INTERVAL_MS,
    logger: log,
    onAction: (action) => metrics.reconciled.inc({ action }),
  });

  const offsetSampler = startOffsetSampler({
    db,
    kafka,
    intervalMs: env.WORKER_OFFSET_SAMPLE_INTERVAL_MS ?? 10_000,
    logger: log.child({ component: "offset-sampler" }),
  });

  const rolloutReconciler = startRolloutReconciler({
    pool,
    db,
    intervalMs: env.WORKER_ROLLOUT_RECONCILE_INTERVAL_MS ?? 60_000,
    logger: log.child({ component: "rollout-reconciler" }),
  });

  const alerts = startAlertEvaluator({
    db,
    redisUrl: env.REDIS_URL,
    queueName: `${env.WORKER_QUEUE}.alerts`,
    workerId,
    intervalMs: env.WORKER_ALERT_INTERVAL_MS ?? 5000,
    retryBaseMs: env.WORKER_ALERT_RETRY_BASE_MS ?? 5000,
    publicUrl: env.SLUICE_PUBLIC_URL ?? null,
    smtp: env.SLUICE_SMTP_URL
      ? { url: env.SLUICE_SMTP_URL, from: env.SLUICE_SMTP_FROM ?? "Sluice alerts <sluice-alerts@localhost>" }
      : null,
    env: env.onCallEnv ?? pipelineEnv(),
    logger: log.child({ component: "alerts" }),
    onTick: (result, delivery) => {
      metrics.alertEvaluations.inc({
        result: result.evaluated
          ? "evaluated"
          : result.reason.startsWith("fenced")
            ? "fenced"
            : "not_lease_holder",
      });
      for (const [outcome, n] of Object.entries(delivery))
        if (n > 0) metrics.alertNotifications.inc({ outcome }, n);
    },
  });

  return {
    workerId,
    metricsPort: metricsServer.port,
    metrics,
    reconciler,
    offsetSampler,
    rolloutReconciler,
    alerts,
    queue,
    async close(timeoutMs) {
      await reconciler.stop();
      await offsetSampler.stop();
      await rolloutReconciler.stop();
      await alerts.close();
      heartbeat.stop();
      const w = worker;
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        w.close().then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
      ]);
      clearTimeout(timer);
      if (!finished) {
        log.warn(
          { activeJobs: w.activeJobs(), timeoutMs },
          "shutdown timeout: abandoning in-flight batches (not committed; they re-run on another worker)",
        );
        await w.close(true).catch(() => undefined);
      }
      await withTimeout(runners.closeAll(), 10_000);
      await markWorkerStopped(db, workerId).catch((err) =>
        log.warn({ err }, "could not mark the worker stopped"),
      );
      await queue.close().catch(() => undefined);
      await connection.quit().catch(() => connection.disconnect());
      await metricsServer.close();
      await db.$disconnect();
      await pool.end();
      return { abandoned: !finished };
    },
  };
}

function withTimeout(p: Promise<unknown>, ms: number): Promise<unknown> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise((resolve) => (t = setTimeout(resolve, ms)))]).finally(() =>
    clearTimeout(t),
  );
}

/** kafkajs logs into the worker's pino logger. */
function kafkaLogCreator(log: Logger) {
  const child = log.child({ component: "kafkajs" });
  return () =>
    ({ level, log: entry }: LogEntry) => {
      const { message, ...rest } = entry;
      if (level <= logLevel.ERROR) child.error(rest, message);
      else if (level === logLevel.WARN) child.warn(rest, message);
      else child.debug(rest, message);
    };
}
