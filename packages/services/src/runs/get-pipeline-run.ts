// One pipeline version's run state for the console and the CLI: phase, failure details, the batch in
// flight (of each partition group, for a version read in groups), and the recent history of transitions.
import type { PrismaClient } from "@sluice/db";
import { WORKER_HEARTBEAT_TIMEOUT_MS } from "./run-record";
import { runPhase, type TDesiredState, type TRunPhase, type TRunStatus } from "./run-state";

export interface TPipelineRunView {
  pipelineVersionId: string;
  status: TRunStatus;
  desiredState: TDesiredState;
  phase: TRunPhase;
  consecutiveFailures: number;
  lastError: string | null;
  lastErrorAt: Date | null;
  failedBatchId: number | null;
  failureSample: unknown;
  batchInFlight: TBatchInFlight | null;
  /** A version read in partition groups: each group's turn of the current run (empty otherwise, or before they start). */
  groups: {
    no: number;
    seq: number;
    inFlight: TBatchInFlight | null;
    consecutiveFailures: number;
    drained: boolean;
    lastBatchAt: Date | null;
    nextBatchAt: Date | null;
  }[];
  /** The latest batch turn of the version or of any of its groups. */
  lastBatchAt: Date | null;
  nextBatchAt: Date | null;
  transitions: {
    action: string;
    from: TRunStatus | null;
    to: TRunStatus;
    desired: TDesiredState;
    actor: string;
    reason: string;
    at: Date;
  }[];
}

export interface TBatchInFlight {
  startedAt: Date;
  workerId: string | null;
  workerAlive: boolean;
}

export async function getPipelineRun(
  db: PrismaClient,
  pipelineVersionId: string,
  opts: { transitions?: number } = {},
): Promise<TPipelineRunView | null> {
  const run = await db.pipelineRun.findUnique({
    where: { pipelineVersionId },
    include: { transitions: { orderBy: { id: "desc" }, take: opts.transitions ?? 50 } },
  });
  if (!run) return null;
  const groups = await db.pipelineRunGroup.findMany({
    where: { pipelineVersionId, runSeq: run.scheduleSeq },
    orderBy: { groupNo: "asc" },
  });
  const workerIds = [run.batchWorkerId, ...groups.map((g) => g.batchWorkerId)].filter((w) => w !== null);
  const workers = new Map(
    (await db.worker.findMany({ where: { id: { in: workerIds } } })).map((w) => [w.id, w]),
  );
  const inFlight = (startedAt: Date | null, workerId: string | null): TBatchInFlight | null => {
    if (!startedAt) return null;
    const worker = workerId ? workers.get(workerId) : undefined;
    const workerAlive =
      !!worker &&
      !worker.stoppedAt &&
      Date.now() - worker.lastHeartbeatAt.getTime() < WORKER_HEARTBEAT_TIMEOUT_MS;
    return { startedAt, workerId, workerAlive };
  };
  const lastBatchAt = [run.lastBatchAt, ...groups.map((g) => g.lastBatchAt)].reduce<Date | null>(
    (a, b) => (b && (!a || b > a) ? b : a),
    null,
  );
  return {
    pipelineVersionId,
    status: run.status,
    desiredState: run.desiredState,
    phase: runPhase(run.status, run.desiredState),
    consecutiveFailures: run.consecutiveFailures,
    lastError: run.lastError,
    lastErrorAt: run.lastErrorAt,
    failedBatchId: run.failedBatchId === null ? null : Number(run.failedBatchId),
    failureSample: run.failureSample,
    batchInFlight: inFlight(run.batchStartedAt, run.batchWorkerId),
    groups: groups.map((g) => ({
      no: g.groupNo,
      seq: g.scheduleSeq,
      inFlight: inFlight(g.batchStartedAt, g.batchWorkerId),
      consecutiveFailures: g.consecutiveFailures,
      drained: g.drained,
      lastBatchAt: g.lastBatchAt,
      nextBatchAt: g.nextBatchAt,
    })),
    lastBatchAt,
    // A grouped version's own row says when its run turn fanned out: the next batch is its groups' soonest.
    nextBatchAt:
      groups.length > 0
        ? groups.reduce<Date | null>(
            (a, g) => (g.nextBatchAt && (!a || g.nextBatchAt < a) ? g.nextBatchAt : a),
            null,
          )
        : run.nextBatchAt,
    transitions: run.transitions.map((t) => ({
      action: t.action,
      from: t.fromStatus,
      to: t.toStatus,
      desired: t.desiredState,
      actor: t.actor,
      reason: t.reason,
      at: t.createdAt,
    })),
  };
}
