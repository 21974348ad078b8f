// A version read in partition groups on the workers, in real Postgres: its run turn fans out to one
// chain of turns per group, the groups claim and hand over on their own, and the lifecycle (pause,
// stop, resume, availableNow, failure, a poison batch) still acts on the version as one.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { createTestDatabase, type TestDatabase } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordWorkerHeartbeat } from "../workers/record-worker-heartbeat";
import { setRun } from "../rollouts/rollout-runs";
import { claimBatchTurn, holdsBatchTurn, releaseBatchAttempt, type TBatchTurnRef } from "./claim-batch-turn";
import { failBatchTurn } from "./fail-batch-turn";
import { findScheduledRuns } from "./find-scheduled-runs";
import { finishBatchTurn } from "./finish-batch-turn";
import { getPipelineRun } from "./get-pipeline-run";
import {
  pausePipelineRun,
  resumePipelineRun,
  startPipelineRun,
  stopPipelineRun,
} from "./run-pipeline-command";

let database: TestDatabase;
let db: PrismaClient;
let teamId: string;

beforeAll(async () => {
  database = await createTestDatabase("run_groups");
  db = createPrismaClient(database.url);
  teamId = (await db.team.create({ data: { slug: "payments-data", name: "Payments Data" } })).id;
  for (const id of ["w:a", "w:b", "w:c"])
    await recordWorkerHeartbeat(db, { id, host: "host", pid: 1, queue: "q", concurrency: 2 }, 0);
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

let n = 0;
async function groupedVersion(trigger: object = { every: "1s" }): Promise<string> {
  const p = await db.pipeline.create({ data: { name: `g${++n}`, ownerTeamId: teamId } });
  const spec = { source: { kafka: { topic: "payments", parallelism: 3 } }, trigger };
  const v = await db.pipelineVersion.create({
    data: { pipelineId: p.id, version: 1, spec, specHash: `h${n}` },
  });
  return v.id;
}

const alice = { actor: "user:alice@sluice.local" };
const groupTurn = (pv: string, runSeq: number, no: number, seq: number, workerId = "w:a"): TBatchTurnRef => ({
  pipelineVersionId: pv,
  seq: runSeq,
  workerId,
  group: { no, of: 3, seq },
});
const outcome = (over: Partial<Parameters<typeof finishBatchTurn>[2]> = {}) => ({
  committed: true,
  backlog: 0,
  triggerEveryMs: 1000 as number | undefined,
  startedAt: new Date(),
  ...over,
});

/** Start the version and run its run turn's job: the groups' first turns. */
async function startAndFanOut(pv: string) {
  const started = await startPipelineRun(db, { pipelineVersionId: pv, ...alice });
  const claim = await claimBatchTurn(db, { pipelineVersionId: pv, seq: started.seq, workerId: "w:a" });
  expect(claim.kind).toBe("fan-out");
  return { seq: started.seq, groups: (claim as Extract<typeof claim, { kind: "fan-out" }>).groups };
}

describe("partition groups on the workers", () => {
  it("the run turn fans out to one turn per group (again and again the same), and the groups hand over on their own", async () => {
    const pv = await groupedVersion();
    const { seq, groups } = await startAndFanOut(pv);
    expect(groups.map((g) => g.group)).toEqual([0, 1, 2].map((no) => ({ no, of: 3, seq: 0 })));
    // A second delivery of the run turn's job changes nothing and queues the same turns.
    const again = await claimBatchTurn(db, { pipelineVersionId: pv, seq, workerId: "w:b" });
    expect(again).toEqual({ kind: "fan-out", groups });
    expect((await findScheduledRuns(db, pv)).map((t) => t.group?.no)).toEqual([0, 1, 2]);

    // Groups 0 and 1 run at once; each moves its own turn on.
    expect(await claimBatchTurn(db, groupTurn(pv, seq, 0, 0, "w:a"))).toMatchObject({ kind: "run" });
    expect(await claimBatchTurn(db, groupTurn(pv, seq, 1, 0, "w:b"))).toMatchObject({ kind: "run" });
    expect(await finishBatchTurn(db, groupTurn(pv, seq, 0, 0, "w:a"), outcome({ backlog: 10 }))).toEqual({
      kind: "next",
      seq: 1,
      delayMs: 0,
    });
    // A second delivery of group 0's finished turn is stale; group 1's turn is untouched by group 0's.
    expect(await claimBatchTurn(db, groupTurn(pv, seq, 0, 0, "w:c"))).toMatchObject({ kind: "stale" });
    expect(await claimBatchTurn(db, groupTurn(pv, seq, 0, 1, "w:a"))).toMatchObject({ kind: "run" });
    const turns = await findScheduledRuns(db, pv);
    expect(turns.map((t) => [t.group?.no, t.group?.seq, t.nextBatchAt === null])).toEqual([
      [0, 1, true],
      [1, 0, true],
      [2, 0, false],
    ]);
    const view = await getPipelineRun(db, pv);
    expect(view?.groups.map((g) => [g.no, g.inFlight?.workerId ?? null])).toEqual([
      [0, "w:a"],
      [1, "w:b"],
      [2, null],
    ]);
    // The version's next batch is its groups' soonest (only group 2 waits for one), its last their latest.
    expect(view?.nextBatchAt).toEqual(turns[2]!.nextBatchAt);
    expect(view?.lastBatchAt).toEqual(view?.groups[0]!.lastBatchAt);
  });

  it("a pause settles only when no group has a batch in flight; resume starts every group afresh", async () => {
    const pv = await groupedVersion();
    const { seq } = await startAndFanOut(pv);
    await claimBatchTurn(db, groupTurn(pv, seq, 0, 0, "w:a"));
    await claimBatchTurn(db, groupTurn(pv, seq, 1, 0, "w:b"));
    expect(await pausePipelineRun(db, { pipelineVersionId: pv, ...alice })).toMatchObject({
      phase: "pausing",
    });

    // A second delivery of the run turn's job, and group 2's job, find groups in flight: they run
    // nothing and settle nothing.
    expect(await claimBatchTurn(db, { pipelineVersionId: pv, seq, workerId: "w:c" })).toEqual({
      kind: "busy",
      workerId: "w:a",
    });
    expect(await claimBatchTurn(db, groupTurn(pv, seq, 2, 0, "w:c"))).toEqual({
      kind: "busy",
      workerId: "w:a",
    });
    // Group 0 commits: group 1 is still in flight, so the version stays pausing.
    expect(await finishBatchTurn(db, groupTurn(pv, seq, 0, 0, "w:a"), outcome({ backlog: 5 }))).toEqual({
      kind: "stale",
    });
    expect((await getPipelineRun(db, pv))?.phase).toBe("pausing");
    // The last group in flight settles it.
    expect(await finishBatchTurn(db, groupTurn(pv, seq, 1, 0, "w:b"), outcome({ backlog: 5 }))).toEqual({
      kind: "settled",
      status: "paused",
    });
    const paused = await getPipelineRun(db, pv);
    expect(paused).toMatchObject({ phase: "paused", batchInFlight: null });
    expect(paused?.transitions[0]).toMatchObject({ action: "paused", actor: "worker:w:b" });
    expect(await findScheduledRuns(db, pv)).toEqual([]);

    const resumed = await resumePipelineRun(db, { pipelineVersionId: pv, ...alice });
    expect(resumed.seq).toBe(seq + 1);
    // An old group job is stale; the new run turn fans out again from each group's turn 0.
    expect(await claimBatchTurn(db, groupTurn(pv, seq, 2, 0, "w:c"))).toMatchObject({ kind: "stale" });
    expect(await findScheduledRuns(db, pv)).toEqual([
      { pipelineVersionId: pv, seq: resumed.seq, nextBatchAt: expect.any(Date) },
    ]);
    const fan = await claimBatchTurn(db, { pipelineVersionId: pv, seq: resumed.seq, workerId: "w:a" });
    expect(fan).toMatchObject({ kind: "fan-out" });
    expect((fan as { groups: { group?: object }[] }).groups.map((g) => g.group)).toEqual(
      [0, 1, 2].map((no) => ({ no, of: 3, seq: 0 })),
    );
  });

  it("a pause with no group in flight, or only on a dead worker, settles at once", async () => {
    const pv = await groupedVersion();
    const { seq } = await startAndFanOut(pv);
    await recordWorkerHeartbeat(db, { id: "w:dead", host: "h", pid: 2, queue: "q", concurrency: 1 }, 0);
    await claimBatchTurn(db, groupTurn(pv, seq, 1, 0, "w:dead"));
    await db.worker.update({
      where: { id: "w:dead" },
      data: { lastHeartbeatAt: new Date(Date.now() - 120_000) },
    });
    expect(await stopPipelineRun(db, { pipelineVersionId: pv, ...alice })).toMatchObject({
      phase: "stopped",
    });
    // Stopped at once: no group says it has a batch in flight (the dead worker's) or one due.
    expect((await getPipelineRun(db, pv))?.groups.map((g) => [g.inFlight, g.nextBatchAt])).toEqual([
      [null, null],
      [null, null],
      [null, null],
    ]);
    expect(await claimBatchTurn(db, groupTurn(pv, seq, 0, 0, "w:a"))).toEqual({
      kind: "idle",
      status: "stopped",
    });
  });

  it("availableNow stops the version once every group has drained its backlog", async () => {
    const pv = await groupedVersion({ availableNow: true });
    const { seq } = await startAndFanOut(pv);
    const drained = outcome({ backlog: 0, triggerEveryMs: undefined });
    for (const no of [0, 2]) {
      await claimBatchTurn(db, groupTurn(pv, seq, no, 0));
      expect(await finishBatchTurn(db, groupTurn(pv, seq, no, 0), drained)).toEqual({
        kind: "group-drained",
      });
    }
    // Only group 1 is left to queue; a drained group's job does nothing.
    expect((await findScheduledRuns(db, pv)).map((t) => t.group?.no)).toEqual([1]);
    expect(await claimBatchTurn(db, groupTurn(pv, seq, 0, 0))).toMatchObject({ kind: "stale" });
    await claimBatchTurn(db, groupTurn(pv, seq, 1, 0));
    expect(await finishBatchTurn(db, groupTurn(pv, seq, 1, 0), drained)).toEqual({ kind: "drained" });
    const run = await getPipelineRun(db, pv);
    expect(run?.phase).toBe("stopped");
    expect(run?.transitions[0]?.reason).toMatch(/backlog of all 3 partition groups is drained/);
  });

  it("failures are counted per group, and a group that keeps failing fails the version", async () => {
    const pv = await groupedVersion();
    const { seq } = await startAndFanOut(pv);
    const error = { message: "kafka: broker not available", permanent: false, batchId: 0 };
    await claimBatchTurn(db, groupTurn(pv, seq, 0, 0));
    expect(await failBatchTurn(db, groupTurn(pv, seq, 0, 0), error, 2)).toEqual({
      kind: "retry",
      consecutiveFailures: 1,
    });
    // Group 1's first failure is its own first, whatever group 0 did.
    await claimBatchTurn(db, groupTurn(pv, seq, 1, 0, "w:b"));
    expect(await failBatchTurn(db, groupTurn(pv, seq, 1, 0, "w:b"), error, 2)).toEqual({
      kind: "retry",
      consecutiveFailures: 1,
    });
    await claimBatchTurn(db, groupTurn(pv, seq, 0, 0));
    expect(await failBatchTurn(db, groupTurn(pv, seq, 0, 0), error, 2)).toEqual({
      kind: "failed",
      consecutiveFailures: 2,
    });
    const run = await getPipelineRun(db, pv);
    expect(run).toMatchObject({ phase: "failed", lastError: error.message });
    expect(await claimBatchTurn(db, groupTurn(pv, seq, 2, 0))).toEqual({ kind: "idle", status: "failed" });
  });

  it("a group's batch that kills every worker fails the version at its next claim, counted per group", async () => {
    const pv = await groupedVersion();
    const { seq } = await startAndFanOut(pv);
    // Group 1 (of 3) has never committed: its next batch is 1. Three attempts start and never finish.
    for (const w of ["w:a", "w:b", "w:c"])
      expect(await claimBatchTurn(db, groupTurn(pv, seq, 1, 0, w))).toMatchObject({ kind: "run" });
    // Meanwhile group 0 claims and a fenced attempt of it is released: neither counts for group 1.
    await claimBatchTurn(db, groupTurn(pv, seq, 0, 0));
    await releaseBatchAttempt(db, groupTurn(pv, seq, 0, 0));
    const poisoned = await claimBatchTurn(db, groupTurn(pv, seq, 1, 0, "w:a"));
    expect(poisoned).toMatchObject({ kind: "poisoned", batchId: 1 });
    expect((poisoned as { message: string }).message).toMatch(/^batch 1 .*died 3 times/);
    expect((await getPipelineRun(db, pv))?.phase).toBe("failed");
  });

  it("a claimed turn is the job's until a promotion stops the version: then a worker that opens a runner after it does not run the batch (one group, and groups)", async () => {
    const promoteAway = (pv: string) =>
      db.$transaction((tx) =>
        setRun(tx, pv, "stopped", "promoted_away", alice.actor, "rollout promoted green"),
      );

    // A version read by one runner.
    const p = await db.pipeline.create({ data: { name: `plain${++n}`, ownerTeamId: teamId } });
    const plain = (
      await db.pipelineVersion.create({
        data: {
          pipelineId: p.id,
          version: 1,
          spec: { source: { kafka: { topic: "payments" } } },
          specHash: `p${n}`,
        },
      })
    ).id;
    const started = await startPipelineRun(db, { pipelineVersionId: plain, ...alice });
    const turn = { pipelineVersionId: plain, seq: started.seq, workerId: "w:a" };
    expect(await claimBatchTurn(db, turn)).toMatchObject({ kind: "run" });
    expect(await holdsBatchTurn(db, turn)).toBe(true);
    expect(await holdsBatchTurn(db, { ...turn, workerId: "w:b" })).toBe(false);
    await promoteAway(plain);
    expect(await holdsBatchTurn(db, turn)).toBe(false);

    // A version read in groups: the group's claimed turn, until the version is stopped.
    const pv = await groupedVersion();
    const { seq } = await startAndFanOut(pv);
    const g1 = groupTurn(pv, seq, 1, 0, "w:b");
    expect(await claimBatchTurn(db, g1)).toMatchObject({ kind: "run" });
    expect(await holdsBatchTurn(db, g1)).toBe(true);
    expect(await holdsBatchTurn(db, groupTurn(pv, seq, 2, 0, "w:b"))).toBe(false);
    await promoteAway(pv);
    expect(await holdsBatchTurn(db, g1)).toBe(false);
  });
});
