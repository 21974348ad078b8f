// Shared set-up of the fleet tests: a test database, extra topics, a queue of its own (on the shared
// Redis or a private one), worker processes, and clean-up of all of it.
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import type { PrismaClient } from "@sluice/db";
import { createPrismaClient } from "@sluice/db";
import { createEngineFixture, type EngineFixture } from "@sluice/engine/testing";
import { testServices, uniqueName } from "@sluice/testing";
import { BatchQueue } from "@sluice/queue";
import { spawnWorker, type WorkerProcess } from "./worker-process";

export interface FleetHarness {
  fx: EngineFixture;
  db: PrismaClient;
  queue: BatchQueue;
  /** fx.topic plus the extra topics. */
  topics: string[];
  workerEnv: Record<string, string>;
  /** Every worker process spawned so far (dead ones included). */
  spawned: WorkerProcess[];
  spawnWorker(extraEnv?: Record<string, string>): WorkerProcess;
  close(): Promise<void>;
}

export async function createFleetHarness(
  label: string,
  opts: { extraTopics: number; redisUrl?: string; workerEnv?: Record<string, string> },
): Promise<FleetHarness> {
  const fx = await createEngineFixture(label);
  const db = createPrismaClient(fx.pool);
  const redisUrl = opts.redisUrl ?? testServices.redisUrl;
  const queueName = uniqueName(`${label}_q`);
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new BatchQueue(queueName, connection);
  const topics = [
    fx.topic,
    ...Array.from({ length: opts.extraTopics }, (_, i) => uniqueName(`${label}_t${i + 1}`)),
  ];
  const workerEnv = {
    DATABASE_URL: fx.db.url,
    REDIS_URL: redisUrl,
    WORKER_QUEUE: queueName,
    WORKER_CONCURRENCY: "2",
    WORKER_LOCK_DURATION_MS: "5000",
    WORKER_RECONCILE_INTERVAL_MS: "2000",
    WORKER_HEARTBEAT_INTERVAL_MS: "1000",
    WORKER_RETRY_BASE_MS: "200",
    WORKER_PG_POOL_MAX: "4",
    WORKER_SHUTDOWN_TIMEOUT_MS: "20000",
    ...opts.workerEnv,
  };
  const spawned: WorkerProcess[] = [];
  return {
    fx,
    db,
    queue,
    topics,
    workerEnv,
    spawned,
    spawnWorker(extraEnv = {}) {
      const w = spawnWorker({ ...workerEnv, ...extraEnv });
      spawned.push(w);
      return w;
    },
    async close() {
      for (const w of spawned)
        if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL");
      await Promise.all(spawned.map((w) => w.exited));
      await queue.queue.obliterate({ force: true }).catch(() => undefined);
      // The workers' alert queue (its job scheduler) too, so no test leaves one firing in Redis.
      const alerts = new Queue(`${queueName}.alerts`, { connection });
      await alerts.obliterate({ force: true }).catch(() => undefined);
      await alerts.close();
      await queue.close();
      await connection.quit().catch(() => connection.disconnect());
      await db.$disconnect();
      const admin = fx.kafka.admin();
      await admin.connect();
      await admin.deleteTopics({ topics: topics.slice(1) }).catch(() => undefined);
      await admin.disconnect();
      await fx.close();
    },
  };
}

/** Which transitions and failures a fleet left behind (for the test's report). */
export async function fleetRunSummary(db: PrismaClient): Promise<{
  phases: Record<string, number>;
  failed: { pipelineVersionId: string; lastError: string | null }[];
}> {
  const runs = await db.pipelineRun.findMany();
  const phases: Record<string, number> = {};
  for (const r of runs) phases[r.status] = (phases[r.status] ?? 0) + 1;
  return {
    phases,
    failed: runs
      .filter((r) => r.status === "failed")
      .map((r) => ({ pipelineVersionId: r.pipelineVersionId, lastError: r.lastError })),
  };
}
