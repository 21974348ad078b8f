// A Redis server of the test's own (the Debian redis-server binary on a free loopback port), for tests
// that FLUSHALL or restart Redis: the shared one on 6379 serves other test files at the same time.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { freePort, waitFor } from "@sluice/testing";

export interface PrivateRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = await mkdtemp(path.join(tmpdir(), "sluice-redis-"));
  const child: ChildProcess = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    { stdio: "ignore" },
  );
  const url = `redis://127.0.0.1:${port}`;
  await waitFor(
    `redis-server on port ${port}`,
    async () => {
      const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      c.on("error", () => undefined);
      try {
        await c.connect();
        return (await c.ping()) === "PONG";
      } finally {
        c.disconnect();
      }
    },
    15_000,
    100,
  );
  return {
    url,
    port,
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
