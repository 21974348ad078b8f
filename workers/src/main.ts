// Worker process entry point: parse config, start the worker app; on SIGTERM/SIGINT let in-flight
// batches commit (up to WORKER_SHUTDOWN_TIMEOUT_MS, then abandon them safely) and exit 0.
import { loadEnv, ZWorkerEnv } from "@sluice/config";
import { startWorkerApp } from "./app";
import { createLogger } from "./logger";

const env = loadEnv(ZWorkerEnv);
const logger = createLogger(env.LOG_LEVEL);
const app = await startWorkerApp(env, logger);
logger.info({ workerId: app.workerId, queue: env.WORKER_QUEUE, metricsPort: app.metricsPort, concurrency: env.WORKER_CONCURRENCY }, "worker started");

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal, timeoutMs: env.WORKER_SHUTDOWN_TIMEOUT_MS }, "shutting down: finishing in-flight batches");
  const { abandoned } = await app.close(env.WORKER_SHUTDOWN_TIMEOUT_MS);
  logger.info({ abandoned }, "worker stopped");
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
