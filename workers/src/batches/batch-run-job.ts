// The `batch.run` job: one micro-batch of one pipeline version, then the hand-over to the next turn.
//
//   claim the turn (Postgres) → take a warm runner holding the lease → runBatch (the engine plans,
//   reads, processes and commits in one fenced transaction) → finish the turn (compare-and-set on
//   schedule_seq) → queue the next turn's job with its delay.
//
// A version read in partition groups runs one such chain per group, concurrently (services
// runs/run-groups.ts): its run turn's job fans out to the groups' first jobs, and each group's job
// runs that group's runner (`group` in the payload).
//
// BullMQ delivers at least once; nothing here relies on it for correctness. A job of an older turn
// does nothing, a batch re-run after a crash re-uses its recorded plan, and a runner that lost the
// lease cannot commit.
import type { Job } from "bullmq";
import type pg from "pg";
import type { PrismaClient } from "@sluice/db";
import {
  ExpectationFailedError,
  FencedError,
  isRetriable,
  loadCheckpoint,
  nextGroupBatchId,
  SupersededError,
  type BatchResult,
} from "@sluice/engine";
import {
  claimBatchTurn,
  holdsBatchTurn,
  failBatchTurn,
  findScheduledRuns,
  finishBatchTurn,
  getScheduledRun,
  observeSchemaDrift,
  releaseBatchAttempt,
  stopSupersededRun,
  type TBatchTurnRef,
} from "@sluice/services";
import { ZBatchRunPayload } from "@sluice/queue";
import type { Logger } from "../logger";
import type { BatchQueue } from "@sluice/queue";
import type { PipelineMetrics } from "./pipeline-metrics";
import { VersionBusyError, type LoadedVersion, type RunnerPool } from "./runner-pool";

export interface BatchRunDeps {
  db: PrismaClient;
  pool: pg.Pool;
  runners: RunnerPool;
  queue: BatchQueue;
  metrics: PipelineMetrics;
  logger: Logger;
  workerId: string;
  maxConsecutiveFailures: number;
  /** Attempts of one batch that may start and never finish (the worker died) before the version fails. */
  maxUnfinishedAttempts: number;
}

export type BatchRunResult =
  | { skipped: "stale" | "settled" | "idle" | "busy" | "superseded" | "failed" }
  | { fannedOut: number }
  | { batchId: number | null; rows: number; backlog: number; next: string };

const labelsOf = (v: LoadedVersion) => ({ pipeline: v.pipeline, version: String(v.version) });

export function createBatchRunHandler(
  deps: BatchRunDeps,
): (data: unknown, job: Job) => Promise<BatchRunResult> {
  const { db, runners, queue, metrics, workerId } = deps;

  /** A logger naming the job's turn (and its partition group's). */
  const turnLogger = (turn: TBatchTurnRef) =>
    deps.logger.child({
      pipelineVersionId: turn.pipelineVersionId,
      seq: turn.seq,
      ...(turn.group ? { group: turn.group.no, groupSeq: turn.group.seq } : {}),
    });

  /** Make sure the version's current turns — its run turn's, or each partition group's — have their jobs. */
  async function ensureCurrentTurn(pipelineVersionId: string): Promise<void> {
    for (const run of await findScheduledRuns(db, pipelineVersionId))
      await queue.ensureTurn(run, () => getScheduledRun(db, pipelineVersionId, run.group?.no));
  }

  return async (data) => {
    const payload = ZBatchRunPayload.parse(data);
    const { group } = payload;
    const turn: TBatchTurnRef = {
      pipelineVersionId: payload.pipelineVersionId,
      seq: payload.seq,
      workerId,
      ...(group ? { group } : {}),
    };
    const log = turnLogger(turn);

    // Counts this attempt in Postgres before anything of the batch runs (a poison batch fails here).
    const claim = await claimBatchTurn(db, turn, {
      maxUnfinishedAttempts: deps.maxUnfinishedAttempts,
      inFlightHere: runners.isBusy(turn.pipelineVersionId, group?.no),
    });
    if (claim.kind === "poisoned") {
      log.error(
        { batchId: claim.batchId, err: claim.message },
        "pipeline version failed: its batch killed every worker that ran it",
      );
      return { skipped: "failed" };
    }
    if (claim.kind === "fan-out") {
      for (const g of claim.groups) await queue.scheduleRun(g);
      log.info({ groups: claim.groups.length }, "run turn fanned out to its partition groups");
      return { fannedOut: claim.groups.length };
    }
    if (claim.kind === "stale") {
      // This job's turn is over (or was never current): make sure the current one has its job.
      if (claim.running) await ensureCurrentTurn(turn.pipelineVersionId);
      return { skipped: "stale" };
    }
    if (claim.kind === "busy") {
      log.info({ inFlightOn: claim.workerId }, "a pause or stop waits for the batch in flight to commit");
      return { skipped: "busy" };
    }
    if (claim.kind === "settled") log.info({ status: claim.status }, `pipeline version ${claim.status}`);
    if (claim.kind !== "run") return { skipped: claim.kind === "settled" ? "settled" : "idle" };

    const startedAt = new Date();
    let lease: Awaited<ReturnType<RunnerPool["acquire"]>> | undefined;
    let result: BatchResult;
    try {
      lease = await runners.acquire(turn.pipelineVersionId, group?.no);
      // A runner opened now took the lease: if a stop or promotion fenced it after this job's claim,
      // the turn has moved on and the batch must not run under the lease it took back.
      if (lease.opened && !(await holdsBatchTurn(db, turn))) {
        await lease.release();
        log.info("the turn moved on while the runner opened (stopped, promoted away): not running its batch");
        return { skipped: "stale" };
      }
      metrics.recordStartLag(labelsOf(lease.version), (startedAt.getTime() - payload.dueAt) / 1000);
      result = await lease.runner.runBatch();
    } catch (err) {
      // A fenced batch or a `fail` expectation leaves the consumer fine; other errors may have left
      // it mid-read, so it is closed and the next batch starts a fresh one.
      await lease?.release({
        discard: !(err instanceof ExpectationFailedError || err instanceof FencedError),
      });
      return handleBatchError(err, turn, lease?.version);
    }
    await resendRequeued(lease, log);
    await lease.release();
    const labels = labelsOf(lease.version);
    if (result.kind === "committed") metrics.recordBatch(labels, result.progress, new Date());
    else metrics.recordEmpty(labels);

    const progress = result.kind === "committed" ? result.progress : undefined;
    const committed = progress !== undefined;
    const backlog = progress?.backlog ?? 0;
    const next = await finishBatchTurn(db, turn, {
      committed,
      backlog,
      triggerEveryMs: lease.version.triggerEveryMs,
      startedAt,
    });
    if (next.kind === "next")
      await queue.scheduleTurn(
        group
          ? {
              pipelineVersionId: turn.pipelineVersionId,
              seq: turn.seq,
              group: { ...group, seq: next.seq },
              delayMs: next.delayMs,
            }
          : { pipelineVersionId: turn.pipelineVersionId, seq: next.seq, delayMs: next.delayMs },
      );
    if (next.kind === "group-drained")
      log.info("partition group drained (availableNow); the version stops when every group has");
    if (next.kind === "settled" || next.kind === "drained")
      log.info(
        { next: next.kind },
        `pipeline version ${next.kind === "drained" ? "drained (availableNow): stopped" : next.kind}`,
      );
    if (result.kind === "committed" && result.drift)
      await observeDrift(turn.pipelineVersionId, result.progress.batchId, result.drift, log);
    return {
      batchId: progress?.batchId ?? null,
      rows: progress?.inputRows ?? 0,
      backlog,
      next: next.kind === "next" ? `turn ${next.seq} in ${next.delayMs} ms` : next.kind,
    };
  };

  /**
   * Webhook deliveries an operator re-queued go out between batches, under the lease this turn holds
   * (engine: requeued-deliveries.ts). The batch has committed, so an error here is not the batch's and
   * is not counted as a failure: the deliveries stay pending and the next turn sends them.
   */
  async function resendRequeued(
    lease: Pick<Awaited<ReturnType<RunnerPool["acquire"]>>, "resendRequeued">,
    log: Logger,
  ): Promise<void> {
    try {
      const r = await lease.resendRequeued();
      if (r && r.found > 0)
        log.info(
          { webhookResend: r },
          `re-sent ${r.sent} of ${r.found} re-queued webhook deliveries (${r.failed} failed again)`,
        );
    } catch (err) {
      log.warn(
        { err: (err as Error).message },
        "re-queued webhook deliveries not sent this turn; they stay pending",
      );
    }
  }

  /**
   * The committed batch rescued unknown fields or quarantined type mismatches: raise (or update) the
   * schema change request that shows them (services change-requests/observe-schema-drift.ts). After
   * the next turn is queued, and never the batch's failure: it has committed.
   */
  async function observeDrift(
    pipelineVersionId: string,
    batchId: number,
    drift: NonNullable<Extract<BatchResult, { kind: "committed" }>["drift"]>,
    log: Logger,
  ): Promise<void> {
    try {
      const r = await observeSchemaDrift(db, { pipelineVersionId, batchId, drift });
      if (r.kind === "raised" || r.kind === "raised+updated")
        log.warn({ changeRequest: r.id, fields: r.fields }, "schema drift: raised a schema change request");
    } catch (err) {
      log.warn(
        { err: (err as Error).message },
        "schema drift not recorded this batch; a later batch with the same drift records it",
      );
    }
  }

  async function handleBatchError(
    err: unknown,
    turn: TBatchTurnRef,
    version: LoadedVersion | undefined,
  ): Promise<BatchRunResult> {
    const log = turnLogger(turn);
    const labels = version ? labelsOf(version) : undefined;
    if (err instanceof SupersededError) {
      await stopSupersededRun(db, turn, err.message);
      log.warn({ reason: err.message }, "pipeline version superseded: stopped");
      return { skipped: "superseded" };
    }
    // Another runner committed in between (a duplicate delivery, or a `sluice run` by hand): retry the
    // turn later without counting it as a failure; the retry re-checks the turn and the lease.
    if (err instanceof FencedError || err instanceof VersionBusyError) {
      if (labels) metrics.recordFailure(labels, "fenced");
      log.warn(
        { err: (err as Error).message },
        "batch fenced off by another runner; the turn will be retried",
      );
      // This attempt ended alive: it must not count towards the poison-batch limit.
      await releaseBatchAttempt(db, turn, {
        inFlightHere: runners.isBusy(turn.pipelineVersionId, turn.group?.no),
      }).catch((e: Error) => log.warn({ err: e.message }, "could not release the batch attempt"));
      throw err;
    }
    const permanent = !isRetriable(err);
    if (labels) metrics.recordFailure(labels, permanent ? "permanent" : "retriable");
    const message = err instanceof Error ? err.message : String(err);
    const batchId = await (
      turn.group
        ? nextGroupBatchId(deps.pool, turn.pipelineVersionId, turn.group)
        : loadCheckpoint(deps.pool, turn.pipelineVersionId).then((cp) => cp.lastBatchId + 1)
    ).catch(() => -1);
    const outcome = await failBatchTurn(
      db,
      turn,
      { message, permanent, batchId, ...(err instanceof ExpectationFailedError ? { rule: err.rule } : {}) },
      deps.maxConsecutiveFailures,
    );
    if (outcome.kind === "retry") {
      log.warn(
        { err: message, consecutiveFailures: outcome.consecutiveFailures },
        "batch failed; retrying with backoff",
      );
      throw err;
    }
    if (outcome.kind === "failed")
      log.error(
        { err: message, batchId, consecutiveFailures: outcome.consecutiveFailures },
        "pipeline version failed",
      );
    return {
      skipped: outcome.kind === "failed" ? "failed" : outcome.kind === "settled" ? "settled" : "stale",
    };
  }
}
