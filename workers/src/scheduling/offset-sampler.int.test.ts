// The offset sampler against real Kafka and Postgres: a pipeline drained by the engine, then paused
// while the producer keeps sending — the samples (and so the backlog chart) show the events waiting,
// per partition, although no batch runs.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { createEngineFixture, drainPipeline, ledgerSpec, type EngineFixture } from "@sluice/engine/testing";
import { findPipelineSeries } from "@sluice/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../logger";
import { startOffsetSampler } from "./offset-sampler";

let fx: EngineFixture;
let db: PrismaClient;

beforeAll(async () => {
  fx = await createEngineFixture("offset_sampler");
  db = createPrismaClient(fx.pool);
  const admin = fx.kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: fx.topic, numPartitions: 2 }], waitForLeaders: true });
  await admin.disconnect();
});
afterAll(async () => {
  await db?.$disconnect();
  await fx?.close();
});

async function produce(partition: number, n: number, from: number): Promise<void> {
  const producer = fx.kafka.producer();
  await producer.connect();
  const messages = Array.from({ length: n }, (_, i) => ({
    value: JSON.stringify({
      event_id: `p${partition}-${from + i}`,
      type: "authorization",
      amount: "1.00",
      event_time: new Date().toISOString(),
    }),
  }));
  await producer.send({ topic: fx.topic, messages: messages.map((m) => ({ ...m, partition })) });
  await producer.disconnect();
}

describe("offset sampler", () => {
  it("a paused pipeline's backlog keeps being measured per partition while the producer sends", async () => {
    await produce(0, 30, 0);
    await produce(1, 10, 0);
    const spec = ledgerSpec(fx.topic);
    const { pipelineVersionId, progress } = await drainPipeline(fx, spec);
    // The engine's progress record carries the batch's end-to-end latency and newest ingest time.
    expect(progress[0]!.latencyMs!.p50).toBeGreaterThanOrEqual(0);
    expect(progress[0]!.latencyMs!.p99).toBeGreaterThanOrEqual(progress[0]!.latencyMs!.p50);
    expect(progress[0]!.ingestTimeMax).toBeDefined();
    await db.pipelineRun.create({ data: { pipelineVersionId, status: "paused", desiredState: "paused" } });

    await produce(0, 7, 30);
    await produce(1, 5, 10);
    const sampler = startOffsetSampler({
      db,
      kafka: fx.kafka,
      intervalMs: 600_000,
      logger: createLogger("silent"),
    });
    try {
      expect(await sampler.tick()).toBe(2);
    } finally {
      await sampler.stop();
    }
    const rows = await db.offsetSample.findMany({
      where: { pipelineVersionId, grainSeconds: 10 },
      orderBy: { partition: "asc" },
    });
    expect(rows.map((r) => [r.partition, Number(r.latestOffset), Number(r.committedOffset)])).toEqual([
      [0, 37, 30],
      [1, 15, 10],
    ]);

    const now = new Date();
    const series = (await findPipelineSeries(db, {
      pipeline: spec.name,
      range: { from: new Date(now.getTime() - 60_000), to: new Date(now.getTime() + 10_000) },
    }))!;
    expect(series.points.map((p) => p.backlog).filter((b) => b !== null)).toEqual([12]);
    expect(series.partitions.map((p) => p.points.map((x) => x.backlog).filter((b) => b !== null))).toEqual([
      [7],
      [5],
    ]);
  });
});
