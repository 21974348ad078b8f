// Proves the worker skeleton against the real Redis: a job enqueued with BullMQ is completed by the
// worker, failures are reported as failures, and the process exits cleanly on SIGTERM.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import {
  createTestDatabase,
  testServices,
  uniqueName,
  type TestDatabase,
  entrypointArgs,
} from "@sluice/testing";
import { JOB_SYSTEM_ECHO } from "@sluice/queue";
import { handleSystemEcho } from "./jobs/system-echo";
import { createLogger } from "./logger";
import { createWorkerMetrics } from "./metrics";
import { startSluiceWorker } from "./worker";

const queueName = uniqueName("worker_it");
const connection = new Redis(testServices.redisUrl, { maxRetriesPerRequest: null });
const queue = new Queue(queueName, { connection });
const events = new QueueEvents(queueName, { connection: { url: testServices.redisUrl } });

let database: TestDatabase | undefined;

afterAll(async () => {
  await database?.drop();
  await queue.obliterate({ force: true });
  await Promise.all([queue.close(), events.close()]);
  await connection.quit();
});

describe("worker skeleton on real Redis", () => {
  it("completes an enqueued job and counts it", async () => {
    const metrics = createWorkerMetrics();
    const worker = startSluiceWorker({
      redisUrl: testServices.redisUrl,
      queue: queueName,
      concurrency: 2,
      handlers: { [JOB_SYSTEM_ECHO]: handleSystemEcho },
      logger: createLogger("silent"),
      metrics,
    });
    try {
      await events.waitUntilReady();
      const job = await queue.add(JOB_SYSTEM_ECHO, { message: "hello" });
      const result = await job.waitUntilFinished(events, 20_000);
      expect(result.echoed).toBe("hello");
      const completed = await metrics.jobsCompleted.get();
      expect(completed.values).toEqual([{ value: 1, labels: { job: JOB_SYSTEM_ECHO } }]);

      const bad = await queue.add("no.such.job", {}, { attempts: 1 });
      await expect(bad.waitUntilFinished(events, 20_000)).rejects.toThrow(/no handler for job "no.such.job"/);
      expect((await metrics.jobsFailed.get()).values[0]?.value).toBe(1);
    } finally {
      await worker.close();
    }
  });

  it("the worker process serves /metrics, registers itself, and exits 0 on SIGTERM", async () => {
    database = await createTestDatabase("worker_process");
    const child = spawn(process.execPath, entrypointArgs("worker"), {
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        WORKER_QUEUE: queueName,
        WORKER_METRICS_PORT: "19464",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    const deadline = Date.now() + 30_000;
    while (!out.includes("worker started") && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(out).toContain("worker started");
    const res = await fetch("http://127.0.0.1:19464/metrics");
    expect(await res.text()).toContain("sluice_worker_active_jobs");
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
    expect(out).toContain("worker stopped");
    // The worker registry has its row, marked stopped by the clean shutdown.
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    const rows = await db.query(`SELECT pid, queue, stopped_at FROM workers`).finally(() => db.end());
    expect(rows.rows).toEqual([{ pid: child.pid, queue: queueName, stopped_at: expect.any(Date) }]);
  });
});
