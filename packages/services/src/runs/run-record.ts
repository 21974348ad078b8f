// Reading and writing a pipeline version's run row inside a transaction, and recording transitions.
// Shared by the lifecycle commands (console, CLI) and the batch turns (workers), so every change of
// status is written the same way: row locked, changed, and a history row with who, when and why.
import { countOf, firstRowOf, sql, tables, type Prisma, type PrismaClient } from "@sluice/db";
import type { TDesiredState, TRunStatus } from "./run-state";

export type TTx = Prisma.TransactionClient;

/** How long a worker may go without a heartbeat before its in-flight batch is considered abandoned. */
export const WORKER_HEARTBEAT_TIMEOUT_MS = 30_000;

/** SQL: the worker `w` (an alias) is alive — a fresh heartbeat and no clean shutdown. */
export const workerAliveSql = (w: string): string =>
  `(${w}.stopped_at IS NULL AND ${w}.last_heartbeat_at > now() - make_interval(secs => ${WORKER_HEARTBEAT_TIMEOUT_MS / 1000}))`;

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
  /** A batch is in flight on a worker that is alive (fresh heartbeat, not shut down) — of any partition group too. */
  batchInFlight: boolean;
}

/** Lock the run row (creating it as `stopped` if the version has none yet). */
export async function lockRun(tx: TTx, pipelineVersionId: string): Promise<TLockedRun> {
  await countOf(
    tx,
    tables
      .insertInto("pipeline_runs")
      .columns(["pipeline_version_id"])
      .expression(tables.selectFrom("pipeline_versions").select("id").where("id", "=", pipelineVersionId))
      .onConflict((oc) => oc.doNothing()),
  );
  const r = await firstRowOf(
    tx,
    tables
      .selectFrom("pipeline_runs as r")
      .leftJoin("workers as w", "w.id", "r.batch_worker_id")
      .select((eb) => [
        eb.cast<TRunStatus>("r.status", "text").as("status"),
        eb.cast<TDesiredState>("r.desired_state", "text").as("desired_state"),
        "r.schedule_seq",
        "r.consecutive_failures",
        "r.batch_started_at",
        "r.batch_worker_id",
        "r.attempt_batch_id",
        "r.unfinished_attempts",
        eb
          .or([
            eb.and([
              eb("r.batch_started_at", "is not", null),
              eb("w.id", "is not", null),
              sql<boolean>`${sql.raw(workerAliveSql("w"))}`,
            ]),
            // A partition group of the current run turn with a batch in flight (run-groups.ts).
            sql<boolean>`EXISTS (SELECT 1 FROM pipeline_run_groups g JOIN workers gw ON gw.id = g.batch_worker_id
              WHERE g.pipeline_version_id = r.pipeline_version_id AND g.run_seq = r.schedule_seq
                AND g.batch_started_at IS NOT NULL AND ${sql.raw(workerAliveSql("gw"))})`,
          ])
          .$castTo<boolean>()
          .as("alive"),
      ])
      .where("r.pipeline_version_id", "=", pipelineVersionId)
      .forUpdate("r"),
  );
  if (!r) throw new Error(`no pipeline version ${pipelineVersionId}`);
  return {
    pipelineVersionId,
    status: r.status,
    desired: r.desired_state,
    seq: r.schedule_seq,
    consecutiveFailures: r.consecutive_failures,
    batchStartedAt: r.batch_started_at,
    batchWorkerId: r.batch_worker_id,
    attemptBatchId: r.attempt_batch_id === null ? null : Number(r.attempt_batch_id),
    unfinishedAttempts: r.unfinished_attempts,
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
