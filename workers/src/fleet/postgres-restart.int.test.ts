// A worker process while Postgres restarts under it: a private cluster (never the shared one) is
// stopped with `-m fast` in the middle of a windowed backfill — every connection is cut, one inside a
// batch's transaction too — and started again seconds later. The worker stays up, the version never
// fails, it drains, and its windows equal the SQL recomputation over the raw events exactly.
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { registerPipelineVersion } from "@sluice/engine";
import {
  createEngineFixture,
  expectBatchesCoverTopic,
  loadReferenceBatches,
  loadReferenceEvents,
  settlementsSpec,
  settlementsWorkload,
  SINK_COLUMNS,
  tumbling5mLateness3mSql,
  type EngineFixture,
} from "@sluice/engine/testing";
import { producePayments } from "@sluice/producer";
import { getPipelineRun, startPipelineRun } from "@sluice/services";
import {
  startPrivatePostgres,
  testServices,
  uniqueName,
  waitFor,
  type PrivatePostgres,
} from "@sluice/testing";
import { BatchQueue } from "@sluice/queue";
import { isStarted, spawnWorker, type WorkerProcess } from "../testing/worker-process";

let fx: EngineFixture;
let cluster: PrivatePostgres;
let pool: pg.Pool;
let db: PrismaClient;
let connection: Redis;
let queue: BatchQueue;
let worker: WorkerProcess | undefined;
const queueName = uniqueName("pg_restart_q");

beforeAll(async () => {
  // The fixture gives the topic (and a database on the shared server this test does not use).
  fx = await createEngineFixture("worker_pg_restart");
  cluster = await startPrivatePostgres();
  const databaseUrl = await cluster.createMigratedDatabase("sluice");
  pool = new pg.Pool({ connectionString: databaseUrl, max: 3 });
  // The test's own connections see the outage too.
  pool.on("error", () => undefined);
  db = createPrismaClient(pool);
  connection = new Redis(testServices.redisUrl, { maxRetriesPerRequest: null });
  queue = new BatchQueue(queueName, connection);
  await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    ...settlementsWorkload(4243),
    manifest: "counts",
    log: () => undefined,
  });
  worker = spawnWorker({
    DATABASE_URL: databaseUrl,
    WORKER_QUEUE: queueName,
    WORKER_LOCK_DURATION_MS: "5000",
    WORKER_RECONCILE_INTERVAL_MS: "2000",
    WORKER_HEARTBEAT_INTERVAL_MS: "1000",
    WORKER_RETRY_BASE_MS: "200",
  });
  await worker.waitForLog(isStarted);
});
afterAll(async () => {
  if (worker && worker.child.exitCode === null) worker.child.kill("SIGKILL");
  await worker?.exited;
  await queue?.queue.obliterate({ force: true }).catch(() => undefined);
  await queue?.close();
  await connection?.quit().catch(() => connection.disconnect());
  await db?.$disconnect();
  await pool?.end().catch(() => undefined);
  await cluster?.destroy();
  await fx?.close();
});

describe("a worker while Postgres restarts", () => {
  it(
    "stays up, never fails the version, drains it, and the windows equal the recomputation exactly",
    { timeout: 300_000 },
    async () => {
      const spec = settlementsSpec(
        fx.topic,
        "worker-restart",
        "worker_restart",
        { window: { tumbling: "5m" }, outputMode: "update", allowedLateness: "3m" },
        {
          source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 100 } },
          trigger: { availableNow: true },
        },
      );
      const { pipelineVersionId } = await registerPipelineVersion(pool, spec);
      await startPipelineRun(
        db,
        { pipelineVersionId, actor: "user:test@sluice.local" },
        { scheduler: queue },
      );
      await waitFor(
        "two committed batches",
        async () => Number((await pool.query(`SELECT count(*) AS n FROM batch_log`)).rows[0].n) >= 2,
        60_000,
        100,
      );

      await cluster.stop();
      // The outage itself: Postgres is down this long while the worker goes on.
      await sleep(8000);
      await cluster.start();
      await waitFor(
        "the version to drain and stop",
        async () => (await getPipelineRun(db, pipelineVersionId))?.phase === "stopped",
        120_000,
        500,
      );

      expect({ exitCode: worker!.child.exitCode, signal: worker!.child.signalCode }).toEqual({
        exitCode: null,
        signal: null,
      });
      const run = await getPipelineRun(db, pipelineVersionId);
      expect(run?.transitions.map((t) => t.action).reverse()).toEqual(["start", "drained"]);
      // The worker did see the outage.
      expect(worker!.logs.some((l) => /Postgres connection failed|batch failed/.test(String(l.msg)))).toBe(
        true,
      );

      await loadReferenceEvents(pool, fx.kafka, fx.topic);
      await loadReferenceBatches(pool, [pipelineVersionId]);
      await expectBatchesCoverTopic(pool, fx.kafka, fx.topic);
      const expected = await pool.query(tumbling5mLateness3mSql());
      const actual = await pool.query(
        `SELECT ${SINK_COLUMNS} FROM worker_restart ORDER BY window_start, merchant_id`,
      );
      expect(actual.rows.length).toBeGreaterThan(50);
      expect(actual.rows).toEqual(expected.rows);
    },
  );
});
