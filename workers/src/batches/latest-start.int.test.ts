// `startingOffsets: latest` on the workers (in-process worker, real Kafka, Postgres and Redis): the
// version's first batch turn records the topic's end offsets in the checkpoint; every record after
// that is read exactly once — including a partition added to the topic later, from its beginning —
// and none from before.
import type { Admin } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { registerPipelineVersion } from "@sluice/engine";
import {
  createEngineFixture,
  ledgerSpec,
  sendLedgerEvents,
  sinkEventIds,
  type EngineFixture,
} from "@sluice/engine/testing";
import { startPipelineRun, stopPipelineRun } from "@sluice/services";
import { waitFor } from "@sluice/testing";
import type { WorkerApp } from "../app";
import { startTestWorker, workerConfig } from "../testing/worker-app-fixture";

let fx: EngineFixture;
let db: PrismaClient;
let admin: Admin;
let app: WorkerApp;

beforeAll(async () => {
  fx = await createEngineFixture("worker_latest");
  db = createPrismaClient(fx.pool);
  admin = fx.kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: fx.topic, numPartitions: 3 }], waitForLeaders: true });
  app = await startTestWorker(workerConfig(fx.db.url));
});
afterAll(async () => {
  await app?.close(5000);
  await app?.queue.queue.obliterate({ force: true }).catch(() => undefined);
  await admin?.disconnect();
  await db?.$disconnect();
  await fx?.close();
});

const sorted = (ids: Iterable<string>) => [...ids].sort();
const sinkMatches = (expected: Set<string>) => async () =>
  JSON.stringify(sorted(await sinkEventIds(fx.pool, "worker_latest"))) === JSON.stringify(sorted(expected));

describe("a worker running a version with startingOffsets: latest", () => {
  it("starts at the end offsets of its first turn and reads everything after, a new partition from its beginning", async () => {
    await sendLedgerEvents(fx.kafka, fx.topic, { prefix: "before-start", count: 50, partitions: [0, 1, 2] });
    const ends = Object.fromEntries(
      (await admin.fetchTopicOffsets(fx.topic)).map((o) => [String(o.partition), Number(o.high)]),
    );
    const spec = ledgerSpec(fx.topic, {
      name: "worker-latest",
      source: { kafka: { topic: fx.topic, startingOffsets: "latest", maxOffsetsPerTrigger: 40 } },
      sink: { postgres: { table: "worker_latest" } },
      trigger: { every: "200ms" },
    });
    const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
    await startPipelineRun(
      db,
      { pipelineVersionId, actor: "user:test@sluice.local" },
      { scheduler: app.queue },
    );

    const start = await waitFor(
      "the first turn to record where the version starts",
      async () => {
        const cp = await fx.pool.query<{ end_offsets: Record<string, number> }>(
          `SELECT end_offsets FROM checkpoints WHERE pipeline_version_id = $1`,
          [pipelineVersionId],
        );
        const offsets = cp.rows[0]?.end_offsets ?? {};
        return Object.keys(offsets).length > 0 ? offsets : undefined;
      },
      60_000,
    );
    expect(start).toEqual(ends);

    const expected = new Set(
      (
        await sendLedgerEvents(fx.kafka, fx.topic, {
          prefix: "after-start",
          count: 60,
          partitions: [0, 1, 2],
        })
      ).ids,
    );
    await waitFor("the records sent after the start in the sink", sinkMatches(expected), 60_000, 250);

    await admin.createPartitions({ topicPartitions: [{ topic: fx.topic, count: 4 }] });
    const added = await sendLedgerEvents(fx.kafka, fx.topic, {
      prefix: "new-partition",
      count: 40,
      partitions: [3, 1],
    });
    expect(added.perPartition["3"]).toBe(20);
    for (const id of added.ids) expected.add(id);
    await waitFor("the new partition's records in the sink", sinkMatches(expected), 90_000, 250);

    await stopPipelineRun(db, { pipelineVersionId, actor: "user:test@sluice.local" });
    expect(sorted(await sinkEventIds(fx.pool, "worker_latest"))).toEqual(sorted(expected));
  });
});
