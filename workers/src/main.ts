// Worker process entry point: parse config, start the worker app; on SIGTERM/SIGINT let in-flight
// batches commit (up to WORKER_SHUTDOWN_TIMEOUT_MS, then abandon them safely) and exit 0.
import { loadEnv, ZWorkerEnv } from "@sluice/config";
import { databaseState, explainDatabaseState } from "@sluice/db";
import { startWorkerApp } from "./app";
import { createLogger } from "./logger";

const env = loadEnv(ZWorkerEnv);
const logger = createLogger(env.LOG_LEVEL);
// A database that is missing or not migrated: say so and what to do, rather than fail on a missing table.
const problem = explainDatabaseState(await databaseState(env.DATABASE_URL), env.DATABASE_URL);
if (problem) {
  logger.fatal(problem);
  process.exit(1);
}
const app = await startWorkerApp(env, logger);
logger.info(
  {
    workerId: app.workerId,
    queue: env.WORKER_QUEUE,
    metricsPort: app.metricsPort,
    concurrency: env.WORKER_CONCURRENCY,
  },
  "worker started",
);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info(
    { signal, timeoutMs: env.WORKER_SHUTDOWN_TIMEOUT_MS },
    "shutting down: finishing in-flight batches",
  );
  const { abandoned } = await app.close(env.WORKER_SHUTDOWN_TIMEOUT_MS);
  logger.info({ abandoned }, "worker stopped");
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
