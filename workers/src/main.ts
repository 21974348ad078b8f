// Worker process entry point: parse config, wire logger, metrics and the BullMQ worker; shut down
// cleanly on SIGTERM/SIGINT (in-flight jobs finish, then the process exits 0).
import { loadEnv, ZWorkerEnv } from "@sluice/config";
import { handleSystemEcho } from "./jobs/system-echo";
import { JOB_SYSTEM_ECHO } from "./jobs/job-definitions";
import { createLogger } from "./logger";
import { createWorkerMetrics, serveMetrics } from "./metrics";
import { startSluiceWorker } from "./worker";

const env = loadEnv(ZWorkerEnv);
const logger = createLogger(env.LOG_LEVEL);
const metrics = createWorkerMetrics();
const metricsServer = await serveMetrics(metrics.registry, env.WORKER_METRICS_PORT);

const worker = startSluiceWorker({
  redisUrl: env.REDIS_URL,
  queue: env.WORKER_QUEUE,
  concurrency: env.WORKER_CONCURRENCY,
  handlers: { [JOB_SYSTEM_ECHO]: handleSystemEcho },
  logger,
  metrics,
});
logger.info({ queue: env.WORKER_QUEUE, metricsPort: metricsServer.port, concurrency: env.WORKER_CONCURRENCY }, "worker started");

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down: finishing in-flight jobs");
  await worker.close();
  await metricsServer.close();
  logger.info("worker stopped");
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
