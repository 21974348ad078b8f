import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { createTestDatabase, type TestDatabase } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findWorkers } from "./find-workers";
import { markWorkerStopped, recordWorkerHeartbeat } from "./record-worker-heartbeat";

let database: TestDatabase;
let db: PrismaClient;
beforeAll(async () => {
  database = await createTestDatabase("worker_registry");
  db = createPrismaClient(database.url);
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

const worker = (id: string, pid: number) => ({
  id,
  host: "box",
  pid,
  queue: "sluice.batches",
  concurrency: 4,
});

describe("worker registry", () => {
  it("lists workers as alive (fresh heartbeat), stopped (clean shutdown) or dead (heartbeat too old), alive first", async () => {
    await recordWorkerHeartbeat(db, worker("box:1:a", 1), 0);
    await recordWorkerHeartbeat(db, worker("box:2:b", 2), 0);
    await recordWorkerHeartbeat(db, worker("box:3:c", 3), 0);
    await recordWorkerHeartbeat(db, worker("box:1:a", 1), 3);
    await markWorkerStopped(db, "box:2:b");
    await db.worker.update({
      where: { id: "box:3:c" },
      data: { lastHeartbeatAt: new Date(Date.now() - 60_000) },
    });

    const workers = await findWorkers(db);
    expect(workers.map((w) => [w.id, w.state, w.activeJobs])).toEqual([
      ["box:1:a", "alive", 3],
      ["box:2:b", "stopped", 0],
      ["box:3:c", "dead", 0],
    ]);
    expect(workers[0]!.startedAt.getTime()).toBeLessThanOrEqual(workers[0]!.lastHeartbeatAt.getTime());
  });
});
