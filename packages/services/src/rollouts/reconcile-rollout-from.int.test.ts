// A rollout's reconciliation starts where both sides started (reconciliation-from.ts), on real Kafka and
// Postgres: blue went live with `startingOffsets: latest` after an hour of settlements was already on
// the topic, and green starts from the earliest offsets, so green reads an hour blue never saw.
// Compared from the beginning, green's first hour would be "only in green"; the rollout's
// reconciliation starts at blue's first offsets, and for windows after the highest event time green
// had seen below them — so the identical results compare clean, with nothing only on one side.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { PipelineRunner, registerPipelineVersion } from "@sluice/engine";
import {
  createEngineFixture,
  drainRunner,
  settlementsSpec,
  settlementsWorkload,
  type EngineFixture,
} from "@sluice/engine/testing";
import { producePayments, simulatedClock } from "@sluice/producer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kafkaTopicOffsets } from "../change-requests/topic-offsets";
import { reconcileRollout } from "./reconcile-rollout";
import { reconcileSinks } from "./reconcile-sinks";
import { startRollout } from "./start-rollout";

const NAME = "late-settlements";
const TABLE = "late_settlements";
const owner = { actorUserId: "u-owner", actor: "owner@sluice.local", from: { origin: "cli" as const } };

let fx: EngineFixture;
let db: PrismaClient;

const produceHour = (start: string, seed: number) =>
  producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    ...settlementsWorkload(seed),
    count: 3000,
    // In order: which rows are late depends on where batches start, and the two sides' batches start
    // at different offsets here; this test is about where the comparison starts.
    outOfOrderShare: 0,
    lateShare: 0,
    clock: simulatedClock({ start, stepMs: 1200 }),
    log: () => undefined,
  });

beforeAll(async () => {
  fx = await createEngineFixture("reconcile-from");
  db = createPrismaClient(fx.db.url);
});
afterAll(async () => {
  await db?.$disconnect();
  await fx?.close();
});

describe("a rollout's reconciliation starts where both sides started", () => {
  it("blue started at the topic's end, green from the earliest offsets: compared from blue's start, clean", async () => {
    await produceHour("2025-03-01T10:00:00Z", 1);
    const blueSpec = settlementsSpec(
      fx.topic,
      NAME,
      TABLE,
      { window: { tumbling: "5m" }, outputMode: "update", allowedLateness: "3m" },
      { source: { kafka: { topic: fx.topic, startingOffsets: "latest", maxOffsetsPerTrigger: 600 } } },
    );
    const { pipelineVersionId: blueId } = await registerPipelineVersion(fx.pool, blueSpec);
    const blue = await PipelineRunner.open(fx.resources, {
      pipelineVersionId: blueId,
      spec: blueSpec,
      owner: "test",
    });
    expect((await blue.runBatch()).kind).toBe("empty"); // its starting offsets: the topic's end now
    await produceHour("2025-03-01T11:30:00Z", 2);
    await drainRunner(blue);

    const greenSpec = { ...blueSpec, description: "the same windows, read from the topic's start" };
    const started = await startRollout(db, kafkaTopicOffsets(fx.kafka), owner, greenSpec, {
      from: { kind: "earliest" },
      reason: "same results, more history",
    });
    expect(Object.values(started.offsets).every((o) => o === 0)).toBe(true);
    const green = await PipelineRunner.open(fx.resources, {
      pipelineVersionId: started.green.pipelineVersionId,
      spec: greenSpec,
      owner: "test",
    });
    await drainRunner(green);

    const done = await reconcileRollout(fx.pool, db, NAME, owner);
    const [r] = done.reconciliations;
    expect(r).toMatchObject({ status: "compared", onlyBlue: 0, onlyGreen: 0, differing: 0 });
    expect(r!.report!.counts.matching).toBeGreaterThan(50);
    // From after the first hour, not from the beginning: after the highest event time of green's
    // batches that read below blue's start — a batch straddling it counts whole, so somewhat later
    // (rounded up to the 5-minute grain), and before what both have finalized.
    const range = r!.report!.range as { from: string; to: string };
    expect(Date.parse(range.from)).toBeGreaterThan(Date.parse("2025-03-01T10:55:00Z"));
    expect(Date.parse(range.from)).toBeLessThan(Date.parse(range.to));

    // Without a start, green's first hour would count against it.
    const side = (id: string, spec: typeof blueSpec, v: number) => ({
      pipelineVersionId: id,
      spec,
      table: { schema: "sluice_sinks", name: `${TABLE}@v${v}` },
    });
    const naive = await reconcileSinks(fx.pool, {
      blue: side(blueId, blueSpec, 1),
      green: side(started.green.pipelineVersionId, greenSpec, 2),
    });
    expect(naive.counts.onlyGreen).toBeGreaterThan(10);
  });
});
