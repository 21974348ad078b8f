// A blue/green rollout end to end on real Kafka and Postgres (docs/rollouts.md):
//   - start: green is registered as a candidate with its own checkpoint and physical table, from the
//     topic's earliest offsets; blue keeps serving, untouched (lease, run, readers);
//   - promote: once reconciled clean, a change request the requester cannot approve; a promotion whose applying connection is
//     killed inside its transaction changes nothing, and approving again applies it once; a reader
//     querying the serving name in a tight loop in another connection sees blue's complete result, then
//     green's complete result — never an error, an empty, partial, mixed or duplicated one, never blue
//     again after green;
//   - roll back: the same switch back; blue resumes from its own checkpoint;
//   - abort: green is superseded, its state and its table dropped; blue never stopped serving.
import pg from "pg";
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { loadCheckpoint, PipelineRunner, SupersededError } from "@sluice/engine";
import {
  createEngineFixture,
  drainPipeline,
  drainRunner,
  ledgerSpec,
  type EngineFixture,
} from "@sluice/engine/testing";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { producePayments } from "@sluice/producer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approveChangeRequest } from "../change-requests/decide-change-request";
import { ChangeRequestError } from "../change-requests/change-request-view";
import { kafkaTopicOffsets } from "../change-requests/topic-offsets";
import { reconcileRollout } from "./reconcile-rollout";
import { requestPromotion } from "./request-promotion";
import { abortRollout, rollbackRollout } from "./rollback-rollout";
import { RolloutError } from "./rollout-error";
import { startRollout } from "./start-rollout";

const NAME = "rollout-ledger";
const TABLE = "rollout_ledger";
const owner = { actorUserId: "u-owner", actor: "owner@sluice.local", from: { origin: "cli" as const } };
const operator = { actorUserId: "u-op", actor: "op@sluice.local", from: { origin: "cli" as const } };

let fx: EngineFixture;
let db: PrismaClient;
let blueSpec: TPipelineSpec;
let greenSpec: TPipelineSpec;
let blueId: string;
let greenId: string;

/** What a reader of the serving name gets: rows, distinct keys, versions, and a checksum. */
const READ = `SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS keys, count(DISTINCT _pipeline_version)::int AS versions,
                     min(_pipeline_version) AS version, coalesce(sum(amount), 0)::text AS total FROM ${TABLE}`;
type TRead = { n: number; keys: number; versions: number; version: string | null; total: string };
const read = async (): Promise<TRead> => (await fx.pool.query<TRead>(READ)).rows[0]!;
const serving = async () =>
  (
    await fx.pool.query<{ id: string | null }>(
      `SELECT serving_version_id AS id FROM pipelines WHERE name = $1`,
      [NAME],
    )
  ).rows[0]!.id;
const runOf = async (pv: string) =>
  (
    await fx.pool.query<{ phase: string }>(
      `SELECT status::text || '/' || desired_state::text AS phase FROM pipeline_runs WHERE pipeline_version_id = $1`,
      [pv],
    )
  ).rows[0]?.phase;
const leaseOf = async (pv: string) =>
  (
    await fx.pool.query<{ epoch: string; owner: string | null }>(
      `SELECT lease_epoch::text AS epoch, lease_owner AS owner FROM checkpoints WHERE pipeline_version_id = $1`,
      [pv],
    )
  ).rows[0]!;
const rolloutState = async () =>
  (await fx.pool.query<{ state: string }>(`SELECT state FROM rollouts ORDER BY id DESC LIMIT 1`)).rows[0]
    ?.state;

beforeAll(async () => {
  fx = await createEngineFixture("rollout");
  db = createPrismaClient(fx.db.url);
  await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: 1500,
    partitions: 2,
    seed: 11,
    duplicateShare: 0.03,
    log: () => undefined,
  });
  blueSpec = ledgerSpec(fx.topic, { name: NAME, sink: { postgres: { table: TABLE } }, expectations: [] });
  // Green's change: large amounts are flagged (warn: kept), so its result equals blue's and a
  // reconciliation lets it be promoted (promotion-gate.int.test.ts refuses a green that differs).
  greenSpec = ledgerSpec(fx.topic, {
    name: NAME,
    sink: { postgres: { table: TABLE } },
    expectations: [{ name: "large_amount", expr: "amount < 1000", action: "warn" }],
  });
  blueId = (await drainPipeline(fx, blueSpec)).pipelineVersionId;
  await fx.pool.query(
    `INSERT INTO pipeline_runs (pipeline_version_id, status, desired_state) VALUES ($1, 'running', 'running')`,
    [blueId],
  );
});
afterAll(async () => {
  await db?.$disconnect();
  await fx?.close();
});

describe("a blue/green rollout", () => {
  it("start: green gets its own checkpoint and table from the earliest offsets; blue keeps serving, untouched", async () => {
    const before = { read: await read(), lease: await leaseOf(blueId) };
    expect(before.read.n).toBeGreaterThan(1000);
    const started = await startRollout(db, kafkaTopicOffsets(fx.kafka), owner, greenSpec, {
      from: { kind: "earliest" },
      reason: "flag large amounts",
    });
    greenId = started.green.pipelineVersionId;
    expect(started).toMatchObject({
      blue: { version: 1 },
      green: { version: 2 },
      offsets: { "0": 0, "1": 0 },
      warnings: [],
    });
    expect(await serving()).toBe(blueId);
    expect(await read()).toEqual(before.read);
    expect(await leaseOf(blueId)).toEqual(before.lease);
    expect(await runOf(blueId)).toBe("running/running");
    expect(await runOf(greenId)).toBe("running/running");
    const tables = await fx.pool.query(`SELECT sink_tables FROM pipeline_versions WHERE id = $1`, [greenId]);
    expect(tables.rows[0]).toEqual({ sink_tables: { [`public.${TABLE}`]: `${TABLE}@v2` } });
    // A second rollout of the same pipeline waits for this one.
    const again = await startRollout(
      db,
      kafkaTopicOffsets(fx.kafka),
      owner,
      { ...greenSpec, description: "x" },
      {
        reason: "another",
      },
    ).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(RolloutError);
    expect((again as Error).message).toContain("already has a rollout running");

    // Green catches up in its own table; readers still see blue's rows.
    const green = await PipelineRunner.open(fx.resources, {
      pipelineVersionId: greenId,
      spec: greenSpec,
      owner: "test",
    });
    await drainRunner(green);
    await green.close();
    const greenRows = await fx.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM sluice_sinks."${TABLE}@v2"`,
    );
    expect(greenRows.rows[0]!.n).toBe(before.read.n);
    expect(await read()).toEqual(before.read);
  });

  it("promote: never by its requester; a killed promotion changes nothing; a tight-loop reader sees blue, then green, each whole", async () => {
    const reconciled = await reconcileRollout(fx.pool, db, NAME, owner);
    expect(reconciled.reconciliations).toMatchObject([
      { status: "compared", onlyBlue: 0, onlyGreen: 0, differing: 0 },
    ]);
    const cr = await requestPromotion(db, owner, { pipeline: NAME, reason: "green reconciled" });
    const own = await approveChangeRequest(db, owner, { id: cr.id, pipeline: NAME }).catch((e: unknown) => e);
    expect(own).toBeInstanceOf(ChangeRequestError);

    const blueRead = await read();
    const blueLease = await leaseOf(blueId);
    // The connection applying the promotion dies inside its transaction (as a killed process's would).
    const admin = new pg.Client({ connectionString: fx.db.url });
    await admin.connect();
    // Its own client: the killed transaction's connection is never given back to its pool, so that
    // pool is left to the database's drop instead of being ended.
    const doomedPool = new pg.Pool({ connectionString: fx.db.url, max: 2 });
    doomedPool.on("error", () => undefined);
    const doomed = createPrismaClient(doomedPool);
    const killed = await approveChangeRequest(
      doomed,
      operator,
      { id: cr.id, pipeline: NAME },
      {
        beforeCommit: async () => {
          await admin.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE datname = current_database() AND state = 'idle in transaction' AND pid <> pg_backend_pid()`,
          );
        },
      },
    ).catch((e: unknown) => e);
    expect(killed).toBeInstanceOf(Error);
    expect(await serving()).toBe(blueId);
    expect(await rolloutState()).toBe("running");
    expect(await runOf(blueId)).toBe("running/running");
    expect(await leaseOf(blueId)).toEqual(blueLease);
    expect(await read()).toEqual(blueRead);
    const status = await fx.pool.query(`SELECT status FROM change_requests WHERE id = $1`, [cr.id]);
    expect(status.rows[0]).toEqual({ status: "pending" });

    // A reader in a tight loop in another connection while the promotion commits.
    const reader = new pg.Client({ connectionString: fx.db.url });
    await reader.connect();
    const seen: TRead[] = [];
    const errors: unknown[] = [];
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        try {
          seen.push((await reader.query<TRead>(READ)).rows[0]!);
        } catch (err) {
          errors.push(err);
        }
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    const applied = await approveChangeRequest(db, operator, {
      id: cr.id,
      pipeline: NAME,
      note: "looks right",
    });
    await new Promise((r) => setTimeout(r, 200));
    stop = true;
    await loop;
    await reader.end();
    await admin.end();
    expect(applied.status).toBe("applied");
    const greenRead = await read();
    expect(errors).toEqual([]);
    expect(greenRead.version).toBe(greenId);
    const whole = (r: TRead) =>
      (r.n === blueRead.n &&
        r.total === blueRead.total &&
        r.version === blueId &&
        r.versions === 1 &&
        r.keys === r.n) ||
      (r.n === greenRead.n &&
        r.total === greenRead.total &&
        r.version === greenId &&
        r.versions === 1 &&
        r.keys === r.n);
    expect(seen.filter((r) => !whole(r))).toEqual([]);
    const firstGreen = seen.findIndex((r) => r.version === greenId);
    expect(firstGreen).toBeGreaterThan(0);
    expect(seen.slice(firstGreen).every((r) => r.version === greenId)).toBe(true);

    expect(await serving()).toBe(greenId);
    expect(await rolloutState()).toBe("promoted");
    expect(await runOf(blueId)).toBe("stopped/stopped");
    // Blue's runner is fenced, its table and state kept.
    expect(Number((await leaseOf(blueId)).epoch)).toBe(Number(blueLease.epoch) + 1);
    const blueTable = await fx.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM sluice_sinks."${TABLE}@v1"`,
    );
    expect(blueTable.rows[0]!.n).toBe(blueRead.n);
    // Applied once: approving again changes nothing.
    await approveChangeRequest(db, operator, { id: cr.id, pipeline: NAME }).catch(() => undefined);
    const promotions = await fx.pool.query(
      `SELECT count(*)::int AS n FROM audit_events WHERE action = 'rollout.promote'`,
    );
    expect(promotions.rows[0]).toEqual({ n: 1 });
  });

  it("roll back: readers see blue again, and blue resumes from its own checkpoint", async () => {
    const blueCheckpoint = await loadCheckpoint(fx.pool, blueId);
    const rolledBack = await rollbackRollout(db, operator, {
      pipeline: NAME,
      reason: "the flag is not needed after all",
    });
    expect(rolledBack.state).toBe("rolled_back");
    expect(await serving()).toBe(blueId);
    expect((await read()).version).toBe(blueId);
    expect(await runOf(blueId)).toBe("running/running");
    expect(await runOf(greenId)).toBe("stopped/stopped");
    const resumed = await PipelineRunner.open(fx.resources, {
      pipelineVersionId: blueId,
      spec: blueSpec,
      owner: "test",
    });
    const result = await resumed.runBatch();
    await resumed.close();
    expect(result.kind).toBe("empty");
    expect((await loadCheckpoint(fx.pool, blueId)).lastBatchId).toBe(blueCheckpoint.lastBatchId);
  });

  it("abort: green stops for good, its state and table are dropped; blue serves throughout", async () => {
    const third = ledgerSpec(fx.topic, {
      name: NAME,
      sink: { postgres: { table: TABLE } },
      expectations: [{ name: "euro_only", expr: "currency == 'EUR'", action: "drop" }],
    });
    const started = await startRollout(db, kafkaTopicOffsets(fx.kafka), owner, third, {
      from: { kind: "blue" },
      reason: "euro only",
    });
    expect(started.offsets).toEqual({ "0": 0, "1": 0 });
    const runner = await PipelineRunner.open(fx.resources, {
      pipelineVersionId: started.green.pipelineVersionId,
      spec: third,
      owner: "test",
    });
    await runner.runBatch();
    await runner.close();
    const before = await read();
    const aborted = await abortRollout(db, operator, { pipeline: NAME, reason: "not needed" });
    expect(aborted).toMatchObject({ state: "aborted", dropped: [`${TABLE}@v3`] });
    expect(await serving()).toBe(blueId);
    expect(await read()).toEqual(before);
    const gone = await fx.pool.query(`SELECT to_regclass('sluice_sinks."${TABLE}@v3"') AS t`);
    expect(gone.rows[0]).toEqual({ t: null });
    const state = await fx.pool.query(
      `SELECT count(*)::int AS n FROM dedup_state WHERE pipeline_version_id = $1`,
      [started.green.pipelineVersionId],
    );
    expect(state.rows[0]).toEqual({ n: 0 });
    const reopened = await PipelineRunner.open(fx.resources, {
      pipelineVersionId: started.green.pipelineVersionId,
      spec: third,
      owner: "test",
    }).catch((e: unknown) => e);
    expect(reopened).toBeInstanceOf(SupersededError);
  });
});
