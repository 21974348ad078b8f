// Reading and writing a pipeline version's run row inside a transaction, and recording transitions.
// Shared by the lifecycle commands (console, CLI) and the batch turns (workers), so every change of
// status is written the same way: row locked, changed, and a history row with who, when and why.
import type { Prisma, PrismaClient } from "@sluice/db";
import type { TDesiredState, TRunStatus } from "./run-state";

export type TTx = Prisma.TransactionClient;

/** How long a worker may go without a heartbeat before its in-flight batch is considered abandoned. */
export const WORKER_HEARTBEAT_TIMEOUT_MS = 30_000;

export interface TLockedRun {
  pipelineVersionId: string;
  status: TRunStatus;
  desired: TDesiredState;
  seq: number;
  consecutiveFailures: number;
  batchStartedAt: Date | null;
  batchWorkerId: string | null;
  /** The batch whose unfinished attempts are counted (claim-batch-turn.ts), and how many there were. */
  attemptBatchId: number | null;
  unfinishedAttempts: number;
  /** A batch is in flight on a worker that is alive (fresh heartbeat, not shut down). */
  batchInFlight: boolean;
}

/** Lock the run row (creating it as `stopped` if the version has none yet). */
export async function lockRun(tx: TTx, pipelineVersionId: string): Promise<TLockedRun> {
  await tx.$executeRaw`INSERT INTO pipeline_runs (pipeline_version_id) SELECT id FROM pipeline_versions WHERE id = ${pipelineVersionId} ON CONFLICT DO NOTHING`;
  const rows = await tx.$queryRaw<
    {
      status: TRunStatus;
      desired: TDesiredState;
      seq: number;
      failures: number;
      started: Date | null;
      worker: string | null;
      attempt_batch: bigint | null;
      unfinished: number;
      alive: boolean;
    }[]
  >`SELECT r.status::text AS status, r.desired_state::text AS desired, r.schedule_seq AS seq, r.consecutive_failures AS failures,
           r.batch_started_at AS started, r.batch_worker_id AS worker, r.attempt_batch_id AS attempt_batch, r.unfinished_attempts AS unfinished,
           (r.batch_started_at IS NOT NULL AND w.id IS NOT NULL AND w.stopped_at IS NULL
             AND w.last_heartbeat_at > now() - make_interval(secs => ${WORKER_HEARTBEAT_TIMEOUT_MS / 1000})) AS alive
      FROM pipeline_runs r LEFT JOIN workers w ON w.id = r.batch_worker_id
     WHERE r.pipeline_version_id = ${pipelineVersionId}
       FOR UPDATE OF r`;
  const r = rows[0];
  if (!r) throw new Error(`no pipeline version ${pipelineVersionId}`);
  return {
    pipelineVersionId,
    status: r.status,
    desired: r.desired,
    seq: r.seq,
    consecutiveFailures: r.failures,
    batchStartedAt: r.started,
    batchWorkerId: r.worker,
    attemptBatchId: r.attempt_batch === null ? null : Number(r.attempt_batch),
    unfinishedAttempts: r.unfinished,
    batchInFlight: r.alive,
  };
}

export interface TTransition {
  action: string;
  from: TRunStatus;
  to: TRunStatus;
  desired: TDesiredState;
  actor: string;
  reason: string;
}

export async function recordTransition(tx: TTx, pipelineVersionId: string, t: TTransition): Promise<void> {
  await tx.pipelineRunTransition.create({
    data: {
      pipelineVersionId,
      action: t.action,
      fromStatus: t.from,
      toStatus: t.to,
      desiredState: t.desired,
      actor: t.actor,
      reason: t.reason.slice(0, 2000),
    },
  });
}

/** Run `fn` in a transaction (row locks are held until it returns). */
export function inTransaction<T>(db: PrismaClient, fn: (tx: TTx) => Promise<T>): Promise<T> {
  return db.$transaction(fn, { timeout: 15_000, maxWait: 10_000 });
}
