// Worker processes as real children (the integration run's bundled worker, @sluice/testing entrypoints), for
// the tests that SIGKILL, SIGTERM and restart them. Their pino JSON logs are kept, parsed, for assertions.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { testServices, entrypointArgs } from "@sluice/testing";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

export interface WorkerProcess {
  child: ChildProcess;
  /** Parsed log lines (pino JSON); non-JSON lines as { msg }. */
  logs: Record<string, unknown>[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first log line matching, or rejects when the process exits or the timeout passes. */
  waitForLog(
    match: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** The metrics port it bound (after "worker started"). */
  metricsPort(): number | undefined;
}

export function spawnWorker(env: Record<string, string>): WorkerProcess {
  const child = spawn(process.execPath, entrypointArgs("worker"), {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      REDIS_URL: testServices.redisUrl,
      KAFKA_BROKERS: testServices.kafkaBrokers.join(","),
      WORKER_METRICS_PORT: "0",
      LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Record<string, unknown>[] = [];
  const waiters: {
    match: (l: Record<string, unknown>) => boolean;
    resolve: (l: Record<string, unknown>) => void;
  }[] = [];
  const onLine = (line: string) => {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line) as Record<string, unknown>;
    } catch {
      parsed = { msg: line };
    }
    logs.push(parsed);
    for (const w of [...waiters]) {
      if (w.match(parsed)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(parsed);
      }
    }
  };
  createInterface({ input: child.stdout! }).on("line", onLine);
  createInterface({ input: child.stderr! }).on("line", onLine);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    logs,
    exited,
    waitForLog(match, timeoutMs = 60_000) {
      const found = logs.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `worker ${child.pid}: no matching log line within ${timeoutMs} ms; last lines: ${JSON.stringify(logs.slice(-5))}`,
              ),
            ),
          timeoutMs,
        );
        const w = {
          match,
          resolve: (l: Record<string, unknown>) => {
            clearTimeout(timer);
            resolve(l);
          },
        };
        waiters.push(w);
        void exited.then(({ code, signal }) => {
          if (!waiters.includes(w)) return;
          waiters.splice(waiters.indexOf(w), 1);
          clearTimeout(timer);
          reject(
            new Error(
              `worker ${child.pid} exited (${code ?? signal}) before the expected log line; last lines: ${JSON.stringify(logs.slice(-5))}`,
            ),
          );
        });
      });
    },
    metricsPort() {
      const started = logs.find((l) => l.msg === "worker started");
      return typeof started?.metricsPort === "number" ? started.metricsPort : undefined;
    },
  };
}

export const isStarted = (l: Record<string, unknown>) => l.msg === "worker started";
