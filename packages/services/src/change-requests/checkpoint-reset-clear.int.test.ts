// A checkpoint reset with `state: "clear"` is a rebuild: a windowed aggregate rewound to the earliest
// offsets with its state cleared recounts every window from nothing — the same windows, totals and
// state as the first run, no row a duplicate of its first reading and none counted twice — while the
// same rewind keeping state is refused before it becomes a request (it would double count). Real
// Postgres and Kafka, the engine's runner, and the services the console calls (request, four-eyes
// approval, apply).
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { PipelineRunner, registerPipelineVersion } from "@sluice/engine";
import { createEngineFixture, drainRunner, ledgerSpec, type EngineFixture } from "@sluice/engine/testing";
import { producePayments } from "@sluice/producer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TAuditWho } from "../audit/record-audit-event";
import { approveChangeRequest } from "./decide-change-request";
import { requestCheckpointReset } from "./request-checkpoint-reset";
import { kafkaTopicOffsets } from "./topic-offsets";

let fx: EngineFixture;
let db: PrismaClient;
let requester: TAuditWho;
let approver: TAuditWho;

beforeAll(async () => {
  fx = await createEngineFixture("reset_clear");
  db = createPrismaClient(fx.db.url);
  const team = await db.team.create({ data: { slug: "payments-data", name: "Payments Data" } });
  const mk = async (email: string) => {
    const user = await db.user.create({ data: { email, name: email, role: "operator" } });
    await db.teamMember.create({ data: { userId: user.id, teamId: team.id } });
    return { actorUserId: user.id, actor: email, from: { origin: "web" as const } };
  };
  requester = await mk("rita.requester@sluice.local");
  approver = await mk("arne.approver@sluice.local");
});
afterAll(async () => {
  await db?.$disconnect();
  await fx?.close();
});

const windows = async () =>
  (
    await fx.pool.query<{ merchant_id: string; window_start: Date; events: number; amount: string }>(
      `SELECT merchant_id, window_start, events::int, amount::text FROM reset_windows ORDER BY 1, 2`,
    )
  ).rows;
const stateRows = async (pv: string) =>
  (
    await fx.pool.query<{ windows: number; keys: number }>(
      `SELECT (SELECT count(*)::int FROM window_state WHERE pipeline_version_id = $1) AS windows,
              (SELECT count(*)::int FROM dedup_state WHERE pipeline_version_id = $1) AS keys`,
      [pv],
    )
  ).rows[0]!;

describe("checkpoint reset that clears state", () => {
  it("rewinds a windowed aggregate to the start and recounts every window exactly once; keeping state is refused", async () => {
    await producePayments({
      topic: fx.topic,
      kafka: fx.kafka,
      count: 1200,
      partitions: 3,
      seed: "reset-clear",
      duplicateShare: 0.05,
      malformedShare: 0.01,
      outOfOrderShare: 0.05,
      log: () => undefined,
    });
    const spec = ledgerSpec(fx.topic, {
      name: "reset-windows",
      source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 250 } },
      expectations: [],
      aggregate: {
        window: { tumbling: "5m" },
        groupBy: ["merchant_id"],
        measures: { events: "count()", amount: "sum(amount)" },
        outputMode: "update",
        allowedLateness: "1h",
      },
      sink: { postgres: { table: "reset_windows" } },
    });
    const { pipelineVersionId: pv } = await registerPipelineVersion(fx.pool, spec);
    const drain = async () =>
      drainRunner(await PipelineRunner.open(fx.resources, { pipelineVersionId: pv, spec, owner: "test" }));
    const firstRun = await drain();
    const before = { windows: await windows(), state: await stateRows(pv) };
    const firstSink = firstRun.reduce((n, p) => n + p.outcomes.sink, 0);
    expect(before.windows.length).toBeGreaterThan(10);
    expect(before.state.keys).toBeGreaterThan(1000);

    const offsets = kafkaTopicOffsets(fx.kafka);
    // Keeping the windows while re-reading their rows would count each row twice: refused, no request.
    await expect(
      requestCheckpointReset(db, offsets, requester, {
        pipeline: "reset-windows",
        to: { kind: "earliest" },
        state: "keep",
        reason: "recount",
      }),
    ).rejects.toThrow(/double count|twice|clear/i);
    expect(await db.changeRequest.count()).toBe(0);

    const cr = await requestCheckpointReset(db, offsets, requester, {
      pipeline: "reset-windows",
      to: { kind: "earliest" },
      state: "clear",
      reason: "rebuild the windows from the topic",
    });
    const applied = await approveChangeRequest(db, approver, { id: cr.id, pipeline: "reset-windows" });
    expect(applied.status).toBe("applied");
    const reset = await db.checkpointReset.findFirstOrThrow({ where: { pipelineVersionId: pv } });
    expect(reset.stateCleared).toBe(true);
    expect(Object.values(reset.offsetsAfter as Record<string, number>)).toEqual([0, 0, 0]);
    expect(await stateRows(pv)).toEqual({ windows: 0, keys: 0 });

    const rebuild = await drain();
    // Every row was processed again (none a duplicate of its first reading) and counted once.
    expect(rebuild.reduce((n, p) => n + p.outcomes.sink, 0)).toBe(firstSink);
    expect(await windows()).toEqual(before.windows);
    expect(await stateRows(pv)).toEqual(before.state);
  });
});
