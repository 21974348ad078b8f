// One pipeline version's run state for the console and the CLI: phase, failure details, the batch in
// flight, and the recent history of transitions.
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
  batchInFlight: { startedAt: Date; workerId: string | null; workerAlive: boolean } | null;
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
  const worker = run.batchWorkerId ? await db.worker.findUnique({ where: { id: run.batchWorkerId } }) : null;
  const workerAlive =
    !!worker &&
    !worker.stoppedAt &&
    Date.now() - worker.lastHeartbeatAt.getTime() < WORKER_HEARTBEAT_TIMEOUT_MS;
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
    batchInFlight: run.batchStartedAt
      ? { startedAt: run.batchStartedAt, workerId: run.batchWorkerId, workerAlive }
      : null,
    lastBatchAt: run.lastBatchAt,
    nextBatchAt: run.nextBatchAt,
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
