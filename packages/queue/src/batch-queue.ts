// The BullMQ side of scheduling: queueing a scheduling turn's batch job (idempotent: the job id is
// derived from the version and the turn) and checking that the current turn of a running version has
// a job that can run — the reconciler's unit of work. Redis holds no truth: everything here can be
// rebuilt from pipeline_runs.
import { Queue, type JobsOptions } from "bullmq";
import type { Redis } from "ioredis";
import { retryDelayMs } from "@sluice/retry-policy";
import type { TBatchScheduler, TGroupTurnRef, TScheduledRun } from "@sluice/services";
import { batchRunJobId, JOB_BATCH_RUN, type TBatchRunPayload } from "./job-definitions";

/** Retries are decided by the handler against Postgres (failBatchTurn); BullMQ only spaces them. */
export const BATCH_BACKOFF_TYPE = "sluice.batch";
const JOB_OPTIONS: JobsOptions = {
  attempts: 1_000_000,
  backoff: { type: BATCH_BACKOFF_TYPE },
  // Kept a while so a reconciler that read an older turn finds the finished job and re-checks,
  // instead of queueing that turn again.
  removeOnComplete: { age: 3600, count: 20_000 },
  removeOnFail: { age: 24 * 3600 },
};

/**
 * Delay before the n-th retry of a failed batch: base·2^(n−1), capped at 30 s, with ±20% jitter — when
 * Postgres or Kafka comes back, the versions that failed together do not all retry at the same instant.
 */
export function batchRetryDelay(attemptsMade: number, baseMs: number): number {
  return retryDelayMs({ baseMs, capMs: 30_000, jitter: 0.2 }, attemptsMade);
}

export type TEnsureTurnResult = "present" | "added" | "retried" | "replaced" | "moved-on";

export class BatchQueue implements TBatchScheduler {
  readonly queue: Queue<TBatchRunPayload>;

  constructor(name: string, connection: Redis) {
    this.queue = new Queue<TBatchRunPayload>(name, { connection });
  }

  async scheduleTurn(turn: {
    pipelineVersionId: string;
    seq: number;
    delayMs: number;
    group?: TGroupTurnRef;
  }): Promise<void> {
    const delay = Math.max(0, Math.round(turn.delayMs));
    const { pipelineVersionId, seq, group } = turn;
    await this.queue.add(
      JOB_BATCH_RUN,
      { pipelineVersionId, seq, dueAt: Date.now() + delay, ...(group ? { group } : {}) },
      { ...JOB_OPTIONS, jobId: batchRunJobId(pipelineVersionId, seq, group), delay },
    );
  }

  /** Queue a turn read from Postgres, due when it says (at once when it says nothing). */
  scheduleRun(run: TScheduledRun): Promise<void> {
    const delayMs = run.nextBatchAt ? run.nextBatchAt.getTime() - Date.now() : 0;
    return this.scheduleTurn({
      pipelineVersionId: run.pipelineVersionId,
      seq: run.seq,
      delayMs,
      group: run.group,
    });
  }

  /**
   * Make sure the current turn of a running version (or of one of its partition groups) has a job
   * that will run. `recheck` re-reads that turn from Postgres, for when the job already finished (the
   * turn may have moved on meanwhile).
   */
  async ensureTurn(
    run: TScheduledRun,
    recheck: () => Promise<TScheduledRun | null>,
  ): Promise<TEnsureTurnResult> {
    const id = batchRunJobId(run.pipelineVersionId, run.seq, run.group);
    const state = await this.queue.getJobState(id);
    if (state === "unknown") {
      await this.scheduleRun(run);
      return "added";
    }
    if (state === "failed") {
      // Only when BullMQ gave up (e.g. the job stalled too often): Postgres still says run it.
      const job = await this.queue.getJob(id);
      await job?.retry("failed");
      return "retried";
    }
    if (state === "completed") {
      const current = await recheck();
      if (!current || current.seq !== run.seq || current.group?.seq !== run.group?.seq) return "moved-on";
      await (await this.queue.getJob(id))?.remove();
      await this.scheduleRun(run);
      return "replaced";
    }
    return "present";
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
