// The run state of a pipeline version in real Postgres: lifecycle commands, the workers' batch turns,
// and the history they leave behind.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { createTestDatabase, type TestDatabase } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordWorkerHeartbeat } from "../workers/record-worker-heartbeat";
import { claimBatchTurn, releaseBatchAttempt } from "./claim-batch-turn";
import { failBatchTurn } from "./fail-batch-turn";
import { findScheduledRuns } from "./find-scheduled-runs";
import { finishBatchTurn } from "./finish-batch-turn";
import { getPipelineRun } from "./get-pipeline-run";
import {
  pausePipelineRun,
  restartPipelineRun,
  resumePipelineRun,
  runPipelineCommand,
  startPipelineRun,
  stopPipelineRun,
  type TBatchScheduler,
} from "./run-pipeline-command";

let database: TestDatabase;
let db: PrismaClient;
let teamId: string;

beforeAll(async () => {
  database = await createTestDatabase("run_lifecycle");
  db = createPrismaClient(database.url);
  teamId = (await db.team.create({ data: { slug: "payments-data", name: "Payments Data" } })).id;
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

let n = 0;
async function newVersion(spec: object = {}): Promise<string> {
  const p = await db.pipeline.create({ data: { name: `p${++n}`, ownerTeamId: teamId } });
  const v = await db.pipelineVersion.create({
    data: { pipelineId: p.id, version: 1, spec, specHash: `h${n}` },
  });
  return v.id;
}

const alice = { actor: "user:alice@sluice.local" };
const worker = { id: "host:1:aaaa", host: "host", pid: 1, queue: "q", concurrency: 2 };
const outcome = (over: Partial<Parameters<typeof finishBatchTurn>[2]> = {}) => ({
  committed: true,
  backlog: 0,
  triggerEveryMs: 1000,
  startedAt: new Date(),
  ...over,
});

describe("lifecycle commands", () => {
  it("start, pause, resume and stop are applied and recorded with who, when and why", async () => {
    const pv = await newVersion();
    const woken: { seq: number }[] = [];
    const scheduler: TBatchScheduler = { scheduleTurn: async (t) => void woken.push({ seq: t.seq }) };

    expect(
      await startPipelineRun(db, { pipelineVersionId: pv, ...alice, reason: "first deploy" }, { scheduler }),
    ).toMatchObject({ changed: true, phase: "running", seq: 1 });
    expect(await startPipelineRun(db, { pipelineVersionId: pv, ...alice }, { scheduler })).toMatchObject({
      changed: false,
      phase: "running",
    });
    expect(
      await pausePipelineRun(db, { pipelineVersionId: pv, ...alice, reason: "upstream incident" }),
    ).toMatchObject({ phase: "paused" });
    expect(
      await resumePipelineRun(db, { pipelineVersionId: pv, actor: "user:bob@sluice.local" }, { scheduler }),
    ).toMatchObject({ phase: "running", seq: 2 });
    expect(await stopPipelineRun(db, { pipelineVersionId: pv, ...alice, reason: "retired" })).toMatchObject({
      phase: "stopped",
    });
    expect(woken).toEqual([{ seq: 1 }, { seq: 2 }]);

    const run = await getPipelineRun(db, pv);
    expect(run?.transitions.reverse().map((t) => [t.action, t.from, t.to, t.actor, t.reason])).toEqual([
      ["start", "stopped", "running", "user:alice@sluice.local", "first deploy"],
      ["pause", "running", "paused", "user:alice@sluice.local", "upstream incident"],
      ["resume", "paused", "running", "user:bob@sluice.local", ""],
      ["stop", "running", "stopped", "user:alice@sluice.local", "retired"],
    ]);
    expect(run?.transitions.every((t) => t.at instanceof Date)).toBe(true);
  });

  it("a command that does not apply is refused with what to do instead, and records nothing", async () => {
    const pv = await newVersion();
    await expect(resumePipelineRun(db, { pipelineVersionId: pv, ...alice })).rejects.toThrow(
      /cannot resume: the pipeline version is stopped.*use start/,
    );
    await expect(restartPipelineRun(db, { pipelineVersionId: pv, ...alice })).rejects.toThrow(
      /restart applies to a failed/,
    );
    await expect(
      runPipelineCommand(db, { pipelineVersionId: pv, command: "explode" as never, ...alice }),
    ).rejects.toThrow();
    expect(await db.pipelineRunTransition.count({ where: { pipelineVersionId: pv } })).toBe(0);
  });
});

describe("batch turns", () => {
  it("a pause during a batch takes effect only after the batch commits, and no next turn is scheduled", async () => {
    const pv = await newVersion();
    await recordWorkerHeartbeat(db, worker, 1);
    await startPipelineRun(db, { pipelineVersionId: pv, ...alice });
    expect(await claimBatchTurn(db, { pipelineVersionId: pv, seq: 1, workerId: worker.id })).toMatchObject({
      kind: "run",
    });

    expect(await pausePipelineRun(db, { pipelineVersionId: pv, ...alice })).toMatchObject({
      phase: "pausing",
    });
    expect((await getPipelineRun(db, pv))?.batchInFlight).toMatchObject({
      workerId: worker.id,
      workerAlive: true,
    });

    expect(
      await finishBatchTurn(
        db,
        { pipelineVersionId: pv, seq: 1, workerId: worker.id },
        outcome({ backlog: 500 }),
      ),
    ).toEqual({ kind: "settled", status: "paused" });
    const run = await getPipelineRun(db, pv);
    expect(run).toMatchObject({ phase: "paused", batchInFlight: null });
    expect(run?.transitions[0]).toMatchObject({
      action: "paused",
      actor: `worker:${worker.id}`,
      reason: "after the in-flight batch committed",
    });
    expect(await findScheduledRuns(db)).not.toContainEqual(
      expect.objectContaining({ pipelineVersionId: pv }),
    );
  });

  it("a second delivery of the turn's job during a pause does not settle it under the batch in flight", async () => {
    const pv = await newVersion();
    const other = { ...worker, id: "host:3:bbbb" };
    await recordWorkerHeartbeat(db, worker, 1);
    await recordWorkerHeartbeat(db, other, 1);
    await startPipelineRun(db, { pipelineVersionId: pv, ...alice });
    const turn = { pipelineVersionId: pv, seq: 1, workerId: worker.id };
    expect((await claimBatchTurn(db, turn)).kind).toBe("run");
    expect(await pausePipelineRun(db, { pipelineVersionId: pv, ...alice })).toMatchObject({
      phase: "pausing",
    });

    // BullMQ took the first delivery for stalled and delivered the job again: to another worker, and to
    // the same worker while its batch still runs. Neither may settle the pause.
    expect(await claimBatchTurn(db, { ...turn, workerId: other.id })).toEqual({
      kind: "busy",
      workerId: worker.id,
    });
    expect(await claimBatchTurn(db, turn, { inFlightHere: true })).toEqual({
      kind: "busy",
      workerId: worker.id,
    });
    expect((await getPipelineRun(db, pv))?.phase).toBe("pausing");

    // The batch in flight was fenced off (another runner committed): it no longer runs, so the next
    // delivery, on any worker, settles the pause.
    await releaseBatchAttempt(db, turn);
    expect((await getPipelineRun(db, pv))?.batchInFlight).toBeNull();
    expect(await claimBatchTurn(db, { ...turn, workerId: other.id })).toEqual({
      kind: "settled",
      status: "paused",
    });
  });

  it("two deliveries of one turn ran at once when a pause came: the first to finish leaves it to the batch still in flight", async () => {
    const pv = await newVersion();
    const other = { ...worker, id: "host:4:cccc" };
    await recordWorkerHeartbeat(db, worker, 1);
    await recordWorkerHeartbeat(db, other, 1);
    await startPipelineRun(db, { pipelineVersionId: pv, ...alice });
    const first = { pipelineVersionId: pv, seq: 1, workerId: worker.id };
    const second = { ...first, workerId: other.id };
    expect((await claimBatchTurn(db, first)).kind).toBe("run");
    expect((await claimBatchTurn(db, second)).kind).toBe("run");
    expect(await pausePipelineRun(db, { pipelineVersionId: pv, ...alice })).toMatchObject({
      phase: "pausing",
    });

    expect(await finishBatchTurn(db, first, outcome({ backlog: 500 }))).toEqual({ kind: "stale" });
    expect(await getPipelineRun(db, pv)).toMatchObject({
      phase: "pausing",
      batchInFlight: { workerId: other.id, workerAlive: true },
    });
    expect(await finishBatchTurn(db, second, outcome({ backlog: 500 }))).toEqual({
      kind: "settled",
      status: "paused",
    });
    expect(await getPipelineRun(db, pv)).toMatchObject({ phase: "paused", batchInFlight: null });
  });

  it("an attempt refused because its own process still runs the version leaves the batch in flight", async () => {
    const pv = await newVersion();
    await recordWorkerHeartbeat(db, worker, 1);
    await startPipelineRun(db, { pipelineVersionId: pv, ...alice });
    const turn = { pipelineVersionId: pv, seq: 1, workerId: worker.id };
    await claimBatchTurn(db, turn);
    await releaseBatchAttempt(db, turn, { inFlightHere: true });
    expect(await pausePipelineRun(db, { pipelineVersionId: pv, ...alice })).toMatchObject({
      phase: "pausing",
    });
  });

  it("a pause with a batch in flight on a dead worker (no heartbeat) takes effect at once", async () => {
    const pv = await newVersion();
    const dead = { ...worker, id: "host:2:dead" };
    await recordWorkerHeartbeat(db, dead, 1);
    await db.worker.update({
      where: { id: dead.id },
      data: { lastHeartbeatAt: new Date(Date.now() - 120_000) },
    });
    await startPipelineRun(db, { pipelineVersionId: pv, ...alice });
    await claimBatchTurn(db, { pipelineVersionId: pv, seq: 1, workerId: dead.id });
    expect(await pausePipelineRun(db, { pipelineVersionId: pv, ...alice })).toMatchObject({
      phase: "paused",
    });
    // The dead worker's job, re-run elsewhere, finds nothing to do.
    expect(await claimBatchTurn(db, { pipelineVersionId: pv, seq: 1, workerId: worker.id })).toEqual({
      kind: "idle",
      status: "paused",
    });
  });

  it("only the job of the current turn runs; duplicates of one turn advance the schedule exactly once", async () => {
    const pv = await newVersion();
    await startPipelineRun(db, { pipelineVersionId: pv, ...alice });
    expect(await claimBatchTurn(db, { pipelineVersionId: pv, seq: 0, workerId: worker.id })).toEqual({
      kind: "stale",
      currentSeq: 1,
      running: true,
    });
    const a = { pipelineVersionId: pv, seq: 1, workerId: "w:a" };
    const b = { pipelineVersionId: pv, seq: 1, workerId: "w:b" };
    expect((await claimBatchTurn(db, a)).kind).toBe("run");
    expect((await claimBatchTurn(db, b)).kind).toBe("run");
    const results = await Promise.all([finishBatchTurn(db, a, outcome()), finishBatchTurn(db, b, outcome())]);
    expect(results.map((r) => r.kind).sort()).toEqual(["next", "stale"]);
    expect(results.find((r) => r.kind === "next")).toMatchObject({ seq: 2 });
    expect(await findScheduledRuns(db)).toContainEqual(
      expect.objectContaining({ pipelineVersionId: pv, seq: 2 }),
    );
  });

  it("transient errors are retried until N consecutive failures, then the version fails with the error and batch id; restart clears it", async () => {
    const pv = await newVersion();
    await startPipelineRun(db, { pipelineVersionId: pv, ...alice });
    const turn = { pipelineVersionId: pv, seq: 1, workerId: worker.id };
    const err = { message: "Kafka read timed out", permanent: false, batchId: 7 };
    expect(await failBatchTurn(db, turn, err, 3)).toEqual({ kind: "retry", consecutiveFailures: 1 });
    expect(await failBatchTurn(db, turn, err, 3)).toEqual({ kind: "retry", consecutiveFailures: 2 });
    expect(await failBatchTurn(db, turn, err, 3)).toEqual({ kind: "failed", consecutiveFailures: 3 });
    const run = await getPipelineRun(db, pv);
    expect(run).toMatchObject({
      phase: "failed",
      lastError: "Kafka read timed out",
      failedBatchId: 7,
      consecutiveFailures: 3,
    });
    expect(run?.transitions[0]).toMatchObject({
      action: "failed",
      reason: "3 consecutive failed batches; last: Kafka read timed out",
    });
    const recorded = await db.batchFailure.findMany({ where: { pipelineVersionId: pv } });
    expect(recorded).toMatchObject([{ kind: "error", batchId: 7n, message: "Kafka read timed out" }]);

    expect(
      await restartPipelineRun(db, { pipelineVersionId: pv, ...alice, reason: "broker fixed" }),
    ).toMatchObject({ phase: "running", seq: 2 });
    expect(await getPipelineRun(db, pv)).toMatchObject({
      consecutiveFailures: 0,
      lastError: null,
      failedBatchId: null,
      failureSample: null,
    });
  });

  it("a success resets the consecutive failure count", async () => {
    const pv = await newVersion();
    await startPipelineRun(db, { pipelineVersionId: pv, ...alice });
    const turn = { pipelineVersionId: pv, seq: 1, workerId: worker.id };
    await failBatchTurn(db, turn, { message: "x", permanent: false, batchId: 0 }, 2);
    await finishBatchTurn(db, turn, outcome());
    expect(
      await failBatchTurn(db, { ...turn, seq: 2 }, { message: "y", permanent: false, batchId: 1 }, 2),
    ).toEqual({ kind: "retry", consecutiveFailures: 1 });
  });

  it("a fail expectation fails the version at once, with the rule and sample rows the engine recorded", async () => {
    const pv = await newVersion();
    await startPipelineRun(db, { pipelineVersionId: pv, ...alice });
    await db.batchFailure.create({
      data: {
        pipelineVersionId: pv,
        batchId: 3n,
        kind: "expectation",
        rule: "positive_amount",
        rowCount: 2,
        message: "m",
        samples: [{ amount: "-1.00" }, { amount: "0.00" }],
      },
    });
    const turn = { pipelineVersionId: pv, seq: 1, workerId: worker.id };
    expect(
      await failBatchTurn(
        db,
        turn,
        { message: "stopped by expectation", permanent: true, batchId: 3, rule: "positive_amount" },
        5,
      ),
    ).toEqual({ kind: "failed", consecutiveFailures: 1 });
    expect(await getPipelineRun(db, pv)).toMatchObject({
      phase: "failed",
      failedBatchId: 3,
      failureSample: {
        rule: "positive_amount",
        rowCount: 2,
        rows: [{ amount: "-1.00" }, { amount: "0.00" }],
      },
    });
    // A retry of the failed job's turn finds the version failed and does nothing.
    expect(await claimBatchTurn(db, turn)).toEqual({ kind: "idle", status: "failed" });
  });

  describe("a poison batch (its worker dies every time)", () => {
    /** A version whose checkpoint is at batch 6 and whose batch 7 is planned over two partitions. */
    async function plannedVersion(): Promise<string> {
      const pv = await newVersion();
      await db.$executeRaw`INSERT INTO checkpoints (pipeline_version_id, last_batch_id) VALUES (${pv}, 6)`;
      const ranges = [
        { partition: 0, from: 100, to: 150 },
        { partition: 1, from: 40, to: 40 },
        { partition: 2, from: 80, to: 120 },
      ];
      await db.$executeRaw`INSERT INTO offset_log (pipeline_version_id, batch_id, ranges) VALUES (${pv}, 7, ${JSON.stringify(ranges)}::jsonb)`;
      await startPipelineRun(db, { pipelineVersionId: pv, ...alice });
      return pv;
    }
    const claim = (pv: string, workerId: string, seq = 1) =>
      claimBatchTurn(db, { pipelineVersionId: pv, seq, workerId }, { maxUnfinishedAttempts: 3 });

    it("after 3 attempts that never finished, the next claim fails the version with the batch id, its offset ranges and the deaths; restart allows 3 more", async () => {
      const pv = await plannedVersion();
      for (const w of ["w:1", "w:2", "w:3"]) expect((await claim(pv, w)).kind).toBe("run"); // each one "dies": no finish, no fail
      const poisoned = await claim(pv, "w:4");
      expect(poisoned).toMatchObject({ kind: "poisoned", batchId: 7 });
      const firstLine =
        "batch 7 (partition 0 offsets 100–149, partition 2 offsets 80–119): the worker running it died 3 times";
      expect((poisoned as { message: string }).message.split("\n")[0]).toBe(firstLine);

      const run = await getPipelineRun(db, pv);
      expect(run).toMatchObject({
        phase: "failed",
        failedBatchId: 7,
        batchInFlight: null,
        failureSample: {
          unfinishedAttempts: 3,
          ranges: [{ partition: 0 }, { partition: 1 }, { partition: 2 }],
        },
      });
      expect(run?.lastError?.split("\n")[0]).toBe(firstLine);
      expect(run?.lastError).toContain("last on worker w:3");
      expect(run?.transitions[0]).toMatchObject({
        action: "failed",
        from: "running",
        to: "failed",
        actor: "worker:w:4",
      });
      expect(await db.batchFailure.findMany({ where: { pipelineVersionId: pv } })).toMatchObject([
        { kind: "worker-died", batchId: 7n },
      ]);
      // Later jobs of that turn find the version failed and do nothing.
      expect(await claim(pv, "w:5")).toEqual({ kind: "idle", status: "failed" });

      expect(
        await restartPipelineRun(db, {
          pipelineVersionId: pv,
          ...alice,
          reason: "workers have more memory now",
        }),
      ).toMatchObject({ phase: "running", seq: 2 });
      for (const w of ["w:6", "w:7", "w:8"]) expect((await claim(pv, w, 2)).kind).toBe("run");
      expect((await claim(pv, "w:9", 2)).kind).toBe("poisoned");
    });

    it("an attempt that ends — a caught error, an empty batch, a fence — does not count; a committed batch starts a new count", async () => {
      const pv = await plannedVersion();
      const turn = (workerId: string, seq = 1) => ({ pipelineVersionId: pv, seq, workerId });
      await claim(pv, "w:1");
      await claim(pv, "w:2");
      expect(
        await failBatchTurn(
          db,
          turn("w:2"),
          { message: "Kafka read timed out", permanent: false, batchId: 7 },
          5,
        ),
      ).toMatchObject({ kind: "retry" });
      await claim(pv, "w:3");
      await claim(pv, "w:4");
      await releaseBatchAttempt(db, turn("w:4")); // fenced off by another runner: alive
      await claim(pv, "w:5");
      expect((await claim(pv, "w:6")).kind).toBe("run"); // 3 unfinished: w:1's and w:2's were cleared by the error, w:4's released
      expect((await claim(pv, "w:7")).kind).toBe("poisoned");

      const pv2 = await plannedVersion();
      await claim(pv2, "w:1");
      await claim(pv2, "w:2");
      await claim(pv2, "w:3");
      // w:3 commits batch 7 and dies before finishing its turn: batch 8 is a new batch with a new count.
      await db.$executeRaw`UPDATE checkpoints SET last_batch_id = 7 WHERE pipeline_version_id = ${pv2}`;
      for (const w of ["w:4", "w:5", "w:6"]) expect((await claim(pv2, w)).kind).toBe("run");
      expect(
        await finishBatchTurn(
          db,
          { pipelineVersionId: pv2, seq: 1, workerId: "w:6" },
          outcome({ committed: false }),
        ),
      ).toMatchObject({ kind: "next", seq: 2 });
      for (const w of ["w:7", "w:8", "w:9"]) expect((await claim(pv2, w, 2)).kind).toBe("run");
      expect(await db.pipelineRun.findUnique({ where: { pipelineVersionId: pv2 } })).toMatchObject({
        attemptBatchId: 8n,
        unfinishedAttempts: 3,
        status: "running",
      });
    });
  });

  it("availableNow: once the backlog is drained the version stops by itself", async () => {
    const pv = await newVersion();
    await startPipelineRun(db, { pipelineVersionId: pv, ...alice });
    const turn = { pipelineVersionId: pv, seq: 1, workerId: worker.id };
    expect(
      await finishBatchTurn(db, turn, outcome({ backlog: 10, triggerEveryMs: undefined })),
    ).toMatchObject({ kind: "next", seq: 2, delayMs: 0 });
    expect(
      await finishBatchTurn(db, { ...turn, seq: 2 }, outcome({ backlog: 0, triggerEveryMs: undefined })),
    ).toEqual({ kind: "drained" });
    expect((await getPipelineRun(db, pv))?.transitions[0]).toMatchObject({
      action: "drained",
      to: "stopped",
      desired: "stopped",
    });
  });
});
