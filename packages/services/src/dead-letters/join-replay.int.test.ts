// Replaying a join's `dimension_missing` dead letters (issue #23): a payment whose customer had no
// version when the dimension passed it is a dead letter; once the customer's version arrives, an
// operator replays it and it is joined with the version valid at its event time — once, although the
// payment was also duplicated in the topic. A payment whose customer still has no version fails again
// and stays a dead letter that may be replayed later; the joined one is refused a second time.
// Real Postgres and Kafka, the engine's runner and the service the console calls.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { PipelineRunner, registerPipelineVersion } from "@sluice/engine";
import { createEngineFixture, drainRunner, ledgerSpec, type EngineFixture } from "@sluice/engine/testing";
import { validateSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import { uniqueName } from "@sluice/testing";
import type { Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestDeadLetterReplay } from "./request-dead-letter-replay";

let fx: EngineFixture;
let db: PrismaClient;
let producer: Producer;
let facts: string;
let customers: string;
const who = { actorUserId: null, actor: "operator@sluice.local", from: { origin: "web" as const } };
const T0 = Date.parse("2026-03-01T12:00:00Z");
const at = (minutes: number) => new Date(T0 + minutes * 60_000);

beforeAll(async () => {
  fx = await createEngineFixture("join_replay");
  db = createPrismaClient(fx.db.url);
  facts = uniqueName("join-replay-payments");
  customers = uniqueName("join-replay-customers");
  const admin = fx.kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [
      { topic: facts, numPartitions: 2 },
      { topic: customers, numPartitions: 1 },
    ],
    waitForLeaders: true,
  });
  await admin.disconnect();
  producer = fx.kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
});
afterAll(async () => {
  await producer?.disconnect();
  await db?.$disconnect();
  await fx?.close();
});

function joinSpec(): TPipelineSpec {
  const base = ledgerSpec(facts);
  const result = validateSpec({
    ...base,
    name: "enriched-replay",
    eventTime: { column: "event_time", watermarkDelay: "48h", idleTimeout: "6h" },
    join: {
      dimension: {
        kafka: { topic: customers, startingOffsets: "earliest", maxOffsetsPerTrigger: 10_000 },
        contract: {
          fields: { customer_id: "string", status: "string", changed_at: "timestamp", version: "int" },
        },
        key: ["customer_id"],
        eventTime: { column: "changed_at", watermarkDelay: "1m", idleTimeout: "6h" },
        sequenceBy: "version",
      },
      on: { customer_id: "customer_id" },
      fields: { customer_status: "status", customer_version: "version" },
      waitFor: "30m",
      onMissing: "deadLetter",
    },
    sink: { postgres: { table: "enriched_replay" } },
  });
  if (!result.ok) throw new Error(`bad join spec: ${JSON.stringify(result.errors)}`);
  return result.spec;
}

const customer = (id: string, status: string, minutes: number, version: number) => ({
  key: id,
  value: JSON.stringify({ customer_id: id, status, changed_at: at(minutes).toISOString(), version }),
});
const payment = (eventId: string, customerId: string, minutes: number, partition: number) => ({
  partition,
  key: customerId,
  value: JSON.stringify({
    event_id: eventId,
    type: "payment",
    merchant_id: "m1",
    customer_id: customerId,
    payment_id: `p-${eventId}`,
    seq: 1,
    amount: "10.00",
    currency: "EUR",
    card_country: "DE",
    event_time: at(minutes).toISOString(),
  }),
});

const joined = async () =>
  (
    await fx.pool.query<{ event_id: string; status: string | null; version: number | null }>(
      `SELECT event_id, customer_status AS status, customer_version::int AS version FROM enriched_replay ORDER BY event_id`,
    )
  ).rows;
const missing = async (pv: string) =>
  (
    await fx.pool.query<{ id: string; event_id: string; reason: string }>(
      `SELECT id, payload->>'event_id' AS event_id, reason FROM dead_letters
        WHERE pipeline_version_id = $1 AND reason LIKE 'dimension_missing%' ORDER BY id`,
      [pv],
    )
  ).rows;

describe("replaying a join's dimension_missing dead letters", () => {
  it("re-joins a row once its dimension version has arrived, once despite a duplicate; a row still without one fails again and stays replayable; nothing is taken twice", async () => {
    const spec = joinSpec();
    const { pipelineVersionId: pv } = await registerPipelineVersion(fx.pool, spec);
    const drain = async () =>
      drainRunner(await PipelineRunner.open(fx.resources, { pipelineVersionId: pv, spec, owner: "test" }));

    // The dimension knows `known` and has passed +29m; `late` and `never` have no version yet.
    await producer.send({
      topic: customers,
      messages: [customer("known", "known-v1", -60, 1), customer("filler", "f", 30, 2)],
    });
    await producer.send({
      topic: facts,
      messages: [
        payment("e-known", "known", 5, 0),
        payment("e-late", "late", 10, 0),
        payment("e-late", "late", 10, 1), // the same payment again, on the other partition
        payment("e-never", "never", 12, 1),
      ],
    });
    await drain();
    expect(await joined()).toEqual([{ event_id: "e-known", status: "known-v1", version: 1 }]);
    const first = await missing(pv);
    expect(first.map((d) => d.event_id)).toEqual(["e-late", "e-never"]);
    expect(first.every((d) => /replay it/.test(d.reason))).toBe(true);

    // `late`'s version arrives (valid from -5m, so at the payment's +10m); a newer one from +11m must
    // not be the one it gets. The next batch reads them.
    await producer.send({
      topic: customers,
      messages: [
        customer("late", "late-v2", -5, 3),
        customer("late", "late-v3", 11, 4),
        customer("filler", "f", 40, 5),
      ],
    });
    await producer.send({ topic: facts, messages: [payment("e-next", "known", 25, 0)] });
    await drain();

    const replay = await requestDeadLetterReplay(db, who, {
      pipeline: "enriched-replay",
      ids: first.map((d) => Number(d.id)),
      note: "the customer feed caught up",
    });
    expect(replay).toMatchObject({ accepted: 2, refused: [] });
    const progress = await drain();
    const replayBatch = progress.find((p) => p.deadLetterReplay)!;
    expect(replayBatch.deadLetterReplay).toEqual({ replayIds: [replay!.replayId], rows: 2 });
    expect(replayBatch.join).toMatchObject({ deadLettered: 1 });

    // Every payment once: `e-late` with the version valid at its event time, `e-never` not at all.
    expect(await joined()).toEqual([
      { event_id: "e-known", status: "known-v1", version: 1 },
      { event_id: "e-late", status: "late-v2", version: 3 },
      { event_id: "e-next", status: "known-v1", version: 1 },
    ]);
    const items = async (replayId: number | null) =>
      (
        await fx.pool.query<{
          dead_letter_id: string;
          status: string;
          outcome: string;
          again: string | null;
        }>(
          `SELECT dead_letter_id, status, outcome, again_dead_letter_id AS again FROM dead_letter_replay_items
            WHERE replay_id = $1 ORDER BY dead_letter_id`,
          [replayId],
        )
      ).rows;
    // `e-never` failed again: the version's dead letter for that record is still the same row (one per
    // source record), which stays the one to replay.
    expect(await items(replay!.replayId)).toEqual([
      { dead_letter_id: first[0]!.id, status: "applied", outcome: "sink", again: null },
      { dead_letter_id: first[1]!.id, status: "applied", outcome: "dead_letter", again: first[1]!.id },
    ]);
    expect((await missing(pv)).map((d) => d.id)).toEqual(first.map((d) => d.id));
    expect(replayBatch.outcomes).toMatchObject({ sink: 1, deadLetter: 1, duplicate: 0 });

    // Asked again: the joined row is refused (it reached the sink); the other may be tried again, and
    // without its customer it fails again — nothing reaches the sink twice.
    const twice = await requestDeadLetterReplay(db, who, {
      pipeline: "enriched-replay",
      ids: first.map((d) => Number(d.id)),
      note: "twice",
    });
    expect(twice!.accepted).toBe(1);
    expect(twice!.refused).toEqual([
      {
        id: Number(first[0]!.id),
        why: expect.stringMatching(/^already replayed into batch \d+ of version 1 .*\(sink/),
      },
    ]);
    await drain();
    expect(await items(twice!.replayId)).toEqual([
      { dead_letter_id: first[1]!.id, status: "applied", outcome: "dead_letter", again: first[1]!.id },
    ]);
    expect((await joined()).map((r) => r.event_id)).toEqual(["e-known", "e-late", "e-next"]);
  });
});
