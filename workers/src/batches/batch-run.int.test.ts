// The batch.run job flow on real Postgres, Kafka and Redis, with an in-process worker: scheduling by
// trigger, availableNow, failures and retries, and pause/resume/stop between batches.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { registerPipelineVersion } from "@sluice/engine";
import {
  auditExactlyOnce,
  createEngineFixture,
  ledgerSpec,
  type EngineFixture,
} from "@sluice/engine/testing";
import { producePayments } from "@sluice/producer";
import {
  getPipelineRun,
  pausePipelineRun,
  resumePipelineRun,
  startPipelineRun,
  stopPipelineRun,
} from "@sluice/services";
import type { WorkerApp } from "../app";
import { waitFor } from "@sluice/testing";
import { startTestWorker, workerConfig } from "../testing/worker-app-fixture";

let fx: EngineFixture;
let db: PrismaClient;
let app: WorkerApp;
let expectedIds: Set<string>;
const actor = "user:test@sluice.local";
const MESSAGES = 3000;

beforeAll(async () => {
  fx = await createEngineFixture("batch_run");
  db = createPrismaClient(fx.pool);
  const { manifest } = await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: MESSAGES,
    partitions: 3,
    seed: 7,
    duplicateShare: 0.05,
    malformedShare: 0.01,
    nonPositiveAmountShare: 0.01,
    manifest: "ids",
    log: () => undefined,
  });
  expectedIds = new Set(manifest.eventIds!);
  app = await startTestWorker(workerConfig(fx.db.url));
});
afterAll(async () => {
  await app?.close(5000);
  await app?.queue.queue.obliterate({ force: true }).catch(() => undefined);
  await db?.$disconnect();
  await fx?.close();
});

const phaseOf = async (pv: string) => (await getPipelineRun(db, pv))?.phase;

describe("batch.run jobs", () => {
  it("availableNow drains the backlog in bounded batches, one at a time, then the version stops by itself", async () => {
    const spec = ledgerSpec(fx.topic, {
      name: "drain",
      source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 400 } },
      sink: { postgres: { table: "drain" } },
      trigger: { availableNow: true },
    });
    const { pipelineVersionId: pv } = await registerPipelineVersion(fx.pool, spec);
    await startPipelineRun(
      db,
      { pipelineVersionId: pv, actor, reason: "backfill" },
      { scheduler: app.queue },
    );

    await waitFor(
      "the version to stop after draining",
      async () => (await phaseOf(pv)) === "stopped",
      90_000,
    );
    const { batches } = await auditExactlyOnce({
      pool: fx.pool,
      kafka: fx.kafka,
      topic: fx.topic,
      table: "drain",
      versionIds: [pv],
      expectedIds,
    });
    expect(batches.length).toBeGreaterThanOrEqual(Math.ceil(MESSAGES / 400));
    expect(Math.max(...batches.map((b) => b.inputRows))).toBeLessThanOrEqual(400);
    const run = await getPipelineRun(db, pv);
    expect(run?.transitions.reverse().map((t) => [t.action, t.to, t.actor.split(":")[0]])).toEqual([
      ["start", "running", "user"],
      ["drained", "stopped", "worker"],
    ]);
    const metrics = await app.metrics.registry.metrics();
    expect(metrics).toMatch(/sluice_pipeline_input_rows_total\{pipeline="drain",version="1"\} 3000/);
    expect(metrics).toMatch(
      /sluice_pipeline_batch_duration_seconds_count\{pipeline="drain",version="1",phase="total"\} \d+/,
    );
  });

  it("a running version is triggered every interval: new data is picked up, and the next turn waits as a delayed job", async () => {
    const spec = ledgerSpec(fx.topic, {
      name: "every",
      sink: { postgres: { table: "every" } },
      trigger: { every: "500ms" },
    });
    const { pipelineVersionId: pv } = await registerPipelineVersion(fx.pool, spec);
    await startPipelineRun(db, { pipelineVersionId: pv, actor }, { scheduler: app.queue });
    await waitFor("the backlog to be read", () => caughtUp(pv), 90_000);

    const more = await producePayments({
      topic: fx.topic,
      kafka: fx.kafka,
      count: 300,
      seed: 8,
      manifest: "ids",
      log: () => undefined,
    });
    for (const id of more.manifest.eventIds!) expectedIds.add(id);
    await waitFor("the new messages to be read", () => caughtUp(pv), 30_000);
    await auditExactlyOnce({
      pool: fx.pool,
      kafka: fx.kafka,
      topic: fx.topic,
      table: "every",
      versionIds: [pv],
      expectedIds,
    });

    const run = await getPipelineRun(db, pv);
    expect(run?.phase).toBe("running");
    // Idle: the current turn's job is a delayed job, due about one interval after the last batch.
    const turn = await db.pipelineRun.findUniqueOrThrow({ where: { pipelineVersionId: pv } });
    const state = await waitFor("the next turn to be queued", async () => {
      const s = await app.queue.queue.getJobState(`batch.run.${pv}.${turn.scheduleSeq}`);
      return s === "delayed" || s === "waiting" || s === "active" ? s : undefined;
    });
    expect(["delayed", "waiting", "active"]).toContain(state);
    await stopPipelineRun(db, { pipelineVersionId: pv, actor });
    await waitFor("the version to stop", async () => (await phaseOf(pv)) === "stopped");
  });

  it("pause lets the in-flight batch commit, leaves no half batch and schedules nothing; resume continues", async () => {
    const spec = ledgerSpec(fx.topic, {
      name: "pausable",
      source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 200 } },
      sink: { postgres: { table: "pausable" } },
      trigger: { every: "200ms" },
    });
    const { pipelineVersionId: pv } = await registerPipelineVersion(fx.pool, spec);
    await startPipelineRun(db, { pipelineVersionId: pv, actor }, { scheduler: app.queue });
    await waitFor("a few batches", async () => (await lastBatchId(pv)) >= 3, 60_000, 50);

    await pausePipelineRun(db, { pipelineVersionId: pv, actor, reason: "maintenance" });
    await waitFor("the pause to take effect", async () => (await phaseOf(pv)) === "paused", 30_000, 50);
    const pausedAt = await lastBatchId(pv);
    // No half batch: nothing planned beyond the last commit, nothing in flight.
    const planned = await fx.pool.query(
      `SELECT batch_id FROM offset_log WHERE pipeline_version_id = $1 AND batch_id > $2`,
      [pv, pausedAt],
    );
    expect(planned.rows).toEqual([]);
    expect((await getPipelineRun(db, pv))?.batchInFlight).toBeNull();
    await sleep(1500);
    expect(await lastBatchId(pv)).toBe(pausedAt);

    await resumePipelineRun(db, { pipelineVersionId: pv, actor }, { scheduler: app.queue });
    await waitFor("the backlog to be read after resuming", () => caughtUp(pv), 90_000);
    expect(await lastBatchId(pv)).toBeGreaterThan(pausedAt);
    await stopPipelineRun(db, { pipelineVersionId: pv, actor, reason: "done" });
    await waitFor("the version to stop", async () => (await phaseOf(pv)) === "stopped", 30_000, 50);
    await auditExactlyOnce({
      pool: fx.pool,
      kafka: fx.kafka,
      topic: fx.topic,
      table: "pausable",
      versionIds: [pv],
      expectedIds,
    });

    const actions = (await getPipelineRun(db, pv))!.transitions.reverse().map((t) => t.action);
    // A command is settled at once when no batch was in flight; else the worker settles it after the
    // commit and records "paused" / "stopped" itself.
    expect(actions.filter((a) => a !== "paused" && a !== "stopped")).toEqual([
      "start",
      "pause",
      "resume",
      "stop",
    ]);
    expect(
      actions.indexOf("paused") === -1 || actions.indexOf("paused") === actions.indexOf("pause") + 1,
    ).toBe(true);
  });

  it("a fail expectation puts the version in failed at once, with the batch id and the offending rows", async () => {
    const spec = ledgerSpec(fx.topic, {
      name: "strict",
      sink: { postgres: { table: "strict" } },
      expectations: [{ name: "positive_amount", expr: "amount > 0", action: "fail" }],
    });
    const { pipelineVersionId: pv } = await registerPipelineVersion(fx.pool, spec);
    await startPipelineRun(db, { pipelineVersionId: pv, actor }, { scheduler: app.queue });
    const run = await waitFor(
      "the version to fail",
      async () => {
        const r = await getPipelineRun(db, pv);
        return r?.phase === "failed" ? r : undefined;
      },
      60_000,
    );
    expect(run.consecutiveFailures).toBe(1);
    expect(run.lastError).toMatch(/expectation "positive_amount"/);
    expect(run.failureSample).toMatchObject({
      rule: "positive_amount",
      rows: expect.arrayContaining([expect.anything()]),
    });
    const failedBatch = run.failedBatchId!;
    expect(await lastBatchId(pv)).toBe(failedBatch - 1);
    expect(run.transitions[0]).toMatchObject({ action: "failed", to: "failed" });

    // Restarting without a fix re-runs the same batch over the same offsets, and fails again.
    const { restartPipelineRun } = await import("@sluice/services");
    await restartPipelineRun(
      db,
      { pipelineVersionId: pv, actor, reason: "retry once" },
      { scheduler: app.queue },
    );
    const again = await waitFor(
      "the version to fail again",
      async () => {
        const r = await getPipelineRun(db, pv);
        return r?.phase === "failed" && r.transitions[0]?.action === "failed" && r.transitions.length >= 4
          ? r
          : undefined;
      },
      60_000,
    );
    expect(again.failedBatchId).toBe(failedBatch);
    expect(again.transitions.slice(0, 3).map((t) => t.action)).toEqual(["failed", "restart", "failed"]);
  });

  it("transient errors are retried with backoff, and after N consecutive failures the version fails with the error", async () => {
    const missing = `${fx.topic}_missing`;
    const spec = ledgerSpec(missing, { name: "no-topic", sink: { postgres: { table: "no_topic" } } });
    const { pipelineVersionId: pv } = await registerPipelineVersion(fx.pool, spec);
    const started = Date.now();
    await startPipelineRun(db, { pipelineVersionId: pv, actor }, { scheduler: app.queue });
    const run = await waitFor(
      "the version to fail",
      async () => {
        const r = await getPipelineRun(db, pv);
        return r?.phase === "failed" ? r : undefined;
      },
      60_000,
    );
    // Three attempts, two backoffs of ~100 and ~200 ms (±20%) between them.
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    expect(run).toMatchObject({ consecutiveFailures: 3, failedBatchId: 0 });
    expect(run.lastError).toMatch(new RegExp(`topic "${missing}"`));
    expect(run.transitions[0]?.reason).toMatch(/^3 consecutive failed batches; last: /);
    const failures = await fx.pool.query(
      `SELECT kind, batch_id, message FROM batch_failures WHERE pipeline_version_id = $1`,
      [pv],
    );
    expect(failures.rows).toMatchObject([{ kind: "error", batch_id: "0" }]);
  });
});

describe("a new version of a running pipeline", () => {
  it("the superseded version is stopped by the worker instead of running on, and the new version continues its checkpoint exactly", async () => {
    const base = {
      name: "upgrade",
      sink: { postgres: { table: "upgrade" } },
      source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 300 } },
      trigger: { every: "300ms" },
    };
    const v1 = await registerPipelineVersion(fx.pool, ledgerSpec(fx.topic, base));
    await startPipelineRun(db, { pipelineVersionId: v1.pipelineVersionId, actor }, { scheduler: app.queue });
    await waitFor(
      "a few batches of version 1",
      async () => (await lastBatchId(v1.pipelineVersionId)) >= 2,
      60_000,
      50,
    );

    // A changed spec continues version 1's checkpoint and fences it; nobody stops version 1 by hand.
    const v2 = await registerPipelineVersion(
      fx.pool,
      ledgerSpec(fx.topic, {
        ...base,
        expectations: [{ name: "known_type", expr: "type != ''", action: "warn" }],
      }),
    );
    expect(v2.continuedFrom?.pipelineVersionId).toBe(v1.pipelineVersionId);
    const stopped = await waitFor(
      "version 1 to be stopped by a worker",
      async () => {
        const r = await getPipelineRun(db, v1.pipelineVersionId);
        return r?.phase === "stopped" ? r : undefined;
      },
      30_000,
      50,
    );
    expect(stopped.transitions[0]).toMatchObject({
      action: "superseded",
      actor: expect.stringMatching(/^worker:/),
    });

    await startPipelineRun(
      db,
      { pipelineVersionId: v2.pipelineVersionId, actor, reason: "deploy version 2" },
      { scheduler: app.queue },
    );
    await waitFor("version 2 to read the rest", () => caughtUp(v2.pipelineVersionId), 90_000);
    await stopPipelineRun(db, { pipelineVersionId: v2.pipelineVersionId, actor });
    await auditExactlyOnce({
      pool: fx.pool,
      kafka: fx.kafka,
      topic: fx.topic,
      table: "upgrade",
      versionIds: [v1.pipelineVersionId, v2.pipelineVersionId],
      expectedIds,
    });
  });
});

async function lastBatchId(pv: string): Promise<number> {
  const r = await fx.pool.query<{ last_batch_id: string }>(
    `SELECT last_batch_id FROM checkpoints WHERE pipeline_version_id = $1`,
    [pv],
  );
  return Number(r.rows[0]?.last_batch_id ?? -1);
}

/** The committed end offsets reach the topic's end. */
async function caughtUp(pv: string): Promise<boolean> {
  const admin = fx.kafka.admin();
  await admin.connect();
  const high = await admin.fetchTopicOffsets(fx.topic).finally(() => admin.disconnect());
  const r = await fx.pool.query<{ end_offsets: Record<string, number> }>(
    `SELECT end_offsets FROM checkpoints WHERE pipeline_version_id = $1`,
    [pv],
  );
  const end = r.rows[0]?.end_offsets ?? {};
  return high.every((h) => Number(h.high) === 0 || end[String(h.partition)] === Number(h.high));
}
