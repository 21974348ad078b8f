// What happens to the side a rollout stops, on real Kafka and Postgres (docs/rollouts.md):
//   - beside a running candidate, blue's change requests hold (blue still serves: a checkpoint reset
//     of blue is applied, not stale), but a schema change is refused — it would register a third
//     version — and stays pending;
//   - promoted away, blue's pending requests are stale (and cannot be approved);
//   - blue keeps its state and table for the rollout's keepPreviousHours after the promotion: before
//     then nothing is retired; after, blue is retired once (superseded, state deleted, its table
//     dropped, audited), readers keep seeing green, and a rollback is refused.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { PipelineRunner } from "@sluice/engine";
import {
  createEngineFixture,
  drainPipeline,
  drainRunner,
  ledgerSpec,
  type EngineFixture,
} from "@sluice/engine/testing";
import { producePayments } from "@sluice/producer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approveChangeRequest } from "../change-requests/decide-change-request";
import { observeSchemaDrift } from "../change-requests/observe-schema-drift";
import { requestCheckpointReset } from "../change-requests/request-checkpoint-reset";
import { kafkaTopicOffsets } from "../change-requests/topic-offsets";
import { findRollout } from "./find-rollout";
import { reconcileRollout } from "./reconcile-rollout";
import { requestPromotion } from "./request-promotion";
import { retireKeptVersions } from "./retire-kept-versions";
import { rollbackRollout } from "./rollback-rollout";
import { RolloutError } from "./rollout-error";
import { startRollout } from "./start-rollout";

const NAME = "kept-ledger";
const TABLE = "kept_ledger";
const HOUR = 3_600_000;
const owner = { actorUserId: "u-owner", actor: "owner@sluice.local", from: { origin: "cli" as const } };
const operator = { actorUserId: "u-op", actor: "op@sluice.local", from: { origin: "cli" as const } };

let fx: EngineFixture;
let db: PrismaClient;
let blueId: string;
let greenId: string;

const statusOf = async (id: string) =>
  (await db.changeRequest.findUniqueOrThrow({ where: { id: BigInt(id) } })).status;
const count = async (sql: string, params: unknown[] = []) =>
  (await fx.pool.query<{ n: number }>(sql, params)).rows[0]!.n;

beforeAll(async () => {
  fx = await createEngineFixture("kept");
  db = createPrismaClient(fx.db.url);
  await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: 600,
    partitions: 2,
    seed: 23,
    duplicateShare: 0.02,
    log: () => undefined,
  });
  const blueSpec = ledgerSpec(fx.topic, {
    name: NAME,
    // Upsert, so blue keeps dedup state for its retirement to delete (an append table keyed by event
    // id keeps the keys itself: engine batch/dedup.ts).
    sink: { postgres: { table: TABLE, mode: "upsert" } },
    expectations: [],
  });
  blueId = (await drainPipeline(fx, blueSpec)).pipelineVersionId;
  await fx.pool.query(
    `INSERT INTO pipeline_runs (pipeline_version_id, status, desired_state) VALUES ($1, 'running', 'running')`,
    [blueId],
  );
  const greenSpec = ledgerSpec(fx.topic, {
    name: NAME,
    sink: { postgres: { table: TABLE, mode: "upsert" } },
    expectations: [{ name: "large_amount", expr: "amount < 1000", action: "warn" }],
  });
  const started = await startRollout(db, kafkaTopicOffsets(fx.kafka), owner, greenSpec, {
    from: { kind: "earliest" },
    reason: "flag large amounts",
    keepPreviousHours: 2,
  });
  expect(started.keepPreviousHours).toBe(2);
  greenId = started.green.pipelineVersionId;
  const green = await PipelineRunner.open(fx.resources, {
    pipelineVersionId: greenId,
    spec: greenSpec,
    owner: "test",
  });
  await drainRunner(green);
  await green.close();
});
afterAll(async () => {
  await db?.$disconnect();
  await fx?.close();
});

describe("the side a rollout stops", () => {
  it("beside a candidate blue's requests hold, a schema change waits; promoted away, blue's pending requests are stale", async () => {
    const offsets = kafkaTopicOffsets(fx.kafka);
    const reset = { pipeline: NAME, version: 1, to: { kind: "latest" as const }, reason: "skip ahead" };
    // Green is the newest version, yet blue serves: a reset of blue is applied, not stale.
    const first = await requestCheckpointReset(db, offsets, owner, reset);
    expect((await approveChangeRequest(db, operator, { id: first.id, pipeline: NAME })).status).toBe(
      "applied",
    );

    const drift = await observeSchemaDrift(db, {
      pipelineVersionId: blueId,
      batchId: 1,
      drift: [
        {
          field: "channel",
          outcome: "rescued",
          inferredType: "string",
          types: { string: 3 },
          count: 3,
          firstSeenMs: 1,
          lastSeenMs: 2,
          samples: [{ event_id: "x-1" }],
        },
      ],
    });
    expect(drift).toMatchObject({ kind: "raised" });
    const schemaChange = (drift as { id: string }).id;
    await expect(approveChangeRequest(db, operator, { id: schemaChange, pipeline: NAME })).rejects.toThrow(
      /has rollout #\d+ running: a schema change would register a third version/,
    );
    expect(await statusOf(schemaChange)).toBe("pending");
    expect(await db.pipelineVersion.count({ where: { pipeline: { name: NAME } } })).toBe(2);

    const second = await requestCheckpointReset(db, offsets, owner, reset);
    expect(
      (await reconcileRollout(fx.pool, db, NAME, owner)).reconciliations.map((r) => [r.status, r.differing]),
    ).toEqual([["compared", 0]]);
    const promotion = await requestPromotion(db, owner, { pipeline: NAME, reason: "reconciled" });
    expect((await approveChangeRequest(db, operator, { id: promotion.id, pipeline: NAME })).status).toBe(
      "applied",
    );
    expect(await statusOf(second.id)).toBe("stale");
    expect(await statusOf(schemaChange)).toBe("stale");
    await expect(approveChangeRequest(db, operator, { id: second.id, pipeline: NAME })).rejects.toThrow(
      /already stale/,
    );
    const audit = await fx.pool.query<{ after: { staleRequests: string[] } }>(
      `SELECT after FROM audit_events WHERE action = 'rollout.promote'`,
    );
    expect(audit.rows[0]!.after.staleRequests.sort()).toEqual([second.id, schemaChange].sort());
  });

  it("kept for keepPreviousHours after the promotion, then retired once: state and table dropped, green still read, no rollback", async () => {
    const promoted = (await findRollout(db, NAME))!;
    expect(promoted.state).toBe("promoted");
    const decided = promoted.decidedAt!.getTime();
    expect(promoted.keptUntil).toEqual(new Date(decided + 2 * HOUR));
    const greenRows = await count(`SELECT count(*)::int AS n FROM ${TABLE}`);
    expect(greenRows).toBeGreaterThan(500);
    expect(
      await count(`SELECT count(*)::int AS n FROM dedup_state WHERE pipeline_version_id = $1`, [blueId]),
    ).toBeGreaterThan(0);

    // Within the keeping time: nothing retired, blue's table still there.
    expect((await retireKeptVersions(db, { now: new Date(decided + 2 * HOUR - 1000) })).retired).toEqual([]);
    expect(await count(`SELECT count(*)::int AS n FROM sluice_sinks."${TABLE}@v1"`)).toBe(greenRows);

    const after = new Date(decided + 2 * HOUR + 1000);
    const [done, again] = await Promise.all([
      retireKeptVersions(db, { now: after }),
      retireKeptVersions(db, { now: after }),
    ]);
    expect([...done.retired, ...again.retired]).toEqual([
      { pipeline: NAME, rolloutId: String(promoted.id), version: 1, dropped: [`${TABLE}@v1`] },
    ]);
    expect([...done.failed, ...again.failed]).toEqual([]);
    expect((await retireKeptVersions(db, { now: after })).retired).toEqual([]);

    const gone = await fx.pool.query(`SELECT to_regclass('sluice_sinks."${TABLE}@v1"') AS t`);
    expect(gone.rows[0]).toEqual({ t: null });
    expect(
      await count(`SELECT count(*)::int AS n FROM dedup_state WHERE pipeline_version_id = $1`, [blueId]),
    ).toBe(0);
    const blue = await fx.pool.query(`SELECT superseded_by_id AS by FROM pipeline_versions WHERE id = $1`, [
      blueId,
    ]);
    expect(blue.rows[0]).toEqual({ by: greenId });
    // Readers still see green's rows through the serving name.
    expect(await count(`SELECT count(*)::int AS n FROM ${TABLE}`)).toBe(greenRows);
    expect(await count(`SELECT count(*)::int AS n FROM audit_events WHERE action = 'rollout.retire'`)).toBe(
      1,
    );

    const view = (await findRollout(db, NAME))!;
    expect(view.previousDroppedAt).toBeInstanceOf(Date);
    const refused = await rollbackRollout(db, operator, { pipeline: NAME, reason: "too late" }).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(RolloutError);
    expect((refused as Error).message).toMatch(
      /can no longer be rolled back: version 1's state and tables were dropped/,
    );
    expect((await findRollout(db, NAME))!.state).toBe("promoted");
  });
});
