// A real worker process (workers/src/main.ts through tsx) for the benchmarks that run pipelines the way
// production does: BullMQ jobs on a queue of the benchmark's own, against its scratch database.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import type { Redis } from "ioredis";
import { BatchQueue } from "@sluice/queue";

export interface BenchWorker {
  child: ChildProcess;
  /** Resolves on the worker's "worker started" log line. */
  started: Promise<void>;
  /** Resolves with the exit code when the process has exited. */
  exited: Promise<number>;
}

export interface BenchWorkerOptions {
  repoRoot: string;
  databaseUrl: string;
  queueName: string;
  /** More settings (WORKER_CONCURRENCY, …) on top of this process's env. */
  env?: Record<string, string>;
  /** Each JSON log line the worker prints. */
  onLog?: (line: Record<string, unknown>) => void;
}

export function spawnBenchWorker(o: BenchWorkerOptions): BenchWorker {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(o.repoRoot, "workers/src/main.ts")], {
    cwd: o.repoRoot,
    env: {
      ...process.env,
      DATABASE_URL: o.databaseUrl,
      WORKER_QUEUE: o.queueName,
      WORKER_METRICS_PORT: "0",
      LOG_LEVEL: "info",
      ...o.env,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let onStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (onStarted = resolve));
  createInterface({ input: child.stdout! }).on("line", (text) => {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return; // not a log line
    }
    if (line.msg === "worker started") onStarted();
    o.onLog?.(line);
  });
  const exited = new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? 1)));
  return { child, started, exited };
}

/** Removes the benchmark's queue and the one the workers' alert evaluator made beside it (<queue>.alerts). */
export async function removeBenchQueues(queue: BatchQueue, redis: Redis, queueName: string): Promise<void> {
  await queue.queue.obliterate({ force: true }).catch(() => undefined);
  const alerts = new BatchQueue(`${queueName}.alerts`, redis);
  await alerts.queue.obliterate({ force: true }).catch(() => undefined);
  await alerts.close();
  await queue.close();
}
