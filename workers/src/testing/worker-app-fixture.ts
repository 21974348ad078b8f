// In-process worker apps for integration tests, against the test's own database and a queue of its own.
import { uniqueName, testServices } from "@sluice/testing";
import { startWorkerApp, type WorkerApp, type WorkerAppConfig } from "../app";
import { createLogger } from "../logger";

export function workerConfig(databaseUrl: string, overrides: Partial<WorkerAppConfig> = {}): WorkerAppConfig {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: testServices.redisUrl,
    KAFKA_BROKERS: testServices.kafkaBrokers,
    WORKER_QUEUE: uniqueName("batches").replace(/_/g, "."),
    WORKER_CONCURRENCY: 2,
    WORKER_METRICS_PORT: 0,
    WORKER_MAX_CONSECUTIVE_FAILURES: 3,
    WORKER_RETRY_BASE_MS: 100,
    WORKER_RECONCILE_INTERVAL_MS: 1000,
    WORKER_HEARTBEAT_INTERVAL_MS: 1000,
    WORKER_LOCK_DURATION_MS: 10_000,
    WORKER_IDLE_RUNNER_MS: 60_000,
    WORKER_PG_POOL_MAX: 4,
    ...overrides,
  };
}

export function startTestWorker(config: WorkerAppConfig): Promise<WorkerApp> {
  return startWorkerApp(config, createLogger(process.env.TEST_WORKER_LOG_LEVEL ?? "silent"));
}
