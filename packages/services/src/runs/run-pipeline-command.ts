// Lifecycle commands on a pipeline version — start, pause, resume, stop, restart — used by the console,
// the CLI and the quick start. Each one locks the run row, applies the state machine (run-state.ts),
// records who/when/why (the audit row names the version: a pipeline may have several running), and
// (optionally) wakes the scheduler so the first batch does not wait for the workers' reconciler.
// A superseded version is refused start/resume/restart here, not later by a worker: a newer version
// continued or rebuilt its state, so it can never run again (its checkpoint is fenced).
import { z } from "zod";
import { countOf, tables, type PrismaClient } from "@sluice/db";
import { recordAuditEvent, type TAuditWho } from "../audit/record-audit-event";
import { clearGroupsInFlight } from "./run-groups";
import type { TGroupTurnRef } from "./scheduled-turn";
import { inTransaction, lockRun, recordTransition } from "./run-record";
import {
  applyRunCommand,
  RunCommandError,
  RUN_COMMANDS,
  runPhase,
  type TRunCommand,
  type TRunPhase,
} from "./run-state";

export const ZRunCommandInput = z.object({
  pipelineVersionId: z.string().min(1).max(100),
  command: z.enum(RUN_COMMANDS as [TRunCommand, ...TRunCommand[]]),
  /** "user:<email>" for people; "system:<what>" for automation. */
  actor: z.string().min(1).max(200),
  reason: z.string().max(2000).default(""),
});
export type TRunCommandInput = z.input<typeof ZRunCommandInput>;

/** Queues the batch job of a scheduling turn; implemented by the workers package with BullMQ. */
export interface TBatchScheduler {
  /** `group`: a partition group's turn within the run turn `seq` (run-groups.ts); without it, the run turn's job. */
  scheduleTurn(turn: {
    pipelineVersionId: string;
    seq: number;
    delayMs: number;
    group?: TGroupTurnRef;
  }): Promise<void>;
}

export interface TRunCommandResult {
  pipelineVersionId: string;
  /** The version number the command acted on. */
  version: number;
  changed: boolean;
  phase: TRunPhase;
  seq: number;
}

export interface TRunCommandOptions {
  scheduler?: TBatchScheduler;
  /** Record the command in the audit log, in its own transaction (the console and the CLI pass it). */
  audit?: TAuditWho & { target?: { type: string; id: string; label: string } };
}

export async function runPipelineCommand(
  db: PrismaClient,
  input: TRunCommandInput,
  opts: TRunCommandOptions = {},
): Promise<TRunCommandResult> {
  const { pipelineVersionId, command, actor, reason } = ZRunCommandInput.parse(input);
  const audit = opts.audit;
  let version: number | null = null;
  const result = await inTransaction(db, async (tx) => {
    const run = await lockRun(tx, pipelineVersionId);
    const meta = await tx.pipelineVersion.findUniqueOrThrow({
      where: { id: pipelineVersionId },
      select: { version: true, supersededById: true },
    });
    version = meta.version;
    const supersededBy = meta.supersededById
      ? await tx.pipelineVersion.findUnique({ where: { id: meta.supersededById }, select: { version: true } })
      : null;
    const before = { version: meta.version, phase: runPhase(run.status, run.desired) };
    const record = (after: unknown) =>
      audit
        ? recordAuditEvent(tx, {
            actorUserId: audit.actorUserId,
            actor: audit.actor,
            action: `pipeline.${command}`,
            target: audit.target ?? { type: "pipeline_version", id: pipelineVersionId },
            reason,
            before,
            after,
            from: audit.from,
          })
        : Promise.resolve();
    const effect = applyRunCommand(command, run.status, run.desired, run.batchInFlight);
    if (effect.noop) {
      await record({ ...before, changed: false });
      return { pipelineVersionId, changed: false, phase: runPhase(run.status, run.desired), seq: run.seq };
    }
    if (supersededBy && effect.desired === "running")
      throw new RunCommandError(
        `cannot ${command} version ${meta.version}: version ${supersededBy.version} took its place (it continued or rebuilt this version's state), so version ${meta.version} can never run again — act on version ${supersededBy.version}`,
        command,
        before.phase,
      );
    const seq = effect.newTurn ? run.seq + 1 : run.seq;
    const settled = run.status === "running" && effect.status !== "running";
    await tx.pipelineRun.update({
      where: { pipelineVersionId },
      data: {
        desiredState: effect.desired,
        status: effect.status,
        scheduleSeq: seq,
        updatedAt: new Date(),
        // A new turn starts every count afresh, including a poison batch's unfinished attempts.
        ...(effect.newTurn
          ? { nextBatchAt: new Date(), consecutiveFailures: 0, unfinishedAttempts: 0, attemptBatchId: null }
          : {}),
        ...(settled ? { batchStartedAt: null, batchWorkerId: null, nextBatchAt: null } : {}),
        ...(effect.clearFailure ? { lastError: null, lastErrorAt: null, failedBatchId: null } : {}),
      },
    });
    // Settled at once (no batch in flight): no partition group is due either.
    if (settled) await clearGroupsInFlight(tx, pipelineVersionId);
    if (effect.clearFailure)
      await countOf(
        tx,
        tables
          .updateTable("pipeline_runs")
          .set({ failure_sample: null })
          .where("pipeline_version_id", "=", pipelineVersionId),
      );
    await recordTransition(tx, pipelineVersionId, {
      action: command,
      from: run.status,
      to: effect.status,
      desired: effect.desired,
      actor,
      reason,
    });
    await record({ version: meta.version, phase: runPhase(effect.status, effect.desired) });
    return {
      pipelineVersionId,
      changed: true,
      phase: runPhase(effect.status, effect.desired),
      seq,
      newTurn: effect.newTurn,
    };
  }).catch(async (err: unknown) => {
    // A refused command changed nothing (its transaction rolled back); the attempt is still history.
    if (err instanceof RunCommandError && audit) {
      await recordAuditEvent(db, {
        actorUserId: audit.actorUserId,
        actor: audit.actor,
        action: `pipeline.${command}`,
        outcome: "refused",
        target: audit.target ?? { type: "pipeline_version", id: pipelineVersionId },
        reason,
        ...(version === null ? {} : { before: { version } }),
        after: { ...(version === null ? {} : { version }), refused: err.message },
        from: audit.from,
      });
    }
    throw err;
  });
  if ("newTurn" in result && result.newTurn && opts.scheduler) {
    await opts.scheduler.scheduleTurn({ pipelineVersionId, seq: result.seq, delayMs: 0 });
  }
  return {
    pipelineVersionId: result.pipelineVersionId,
    version: version!,
    changed: result.changed,
    phase: result.phase,
    seq: result.seq,
  };
}

export const startPipelineRun = (
  db: PrismaClient,
  i: Omit<TRunCommandInput, "command">,
  o?: TRunCommandOptions,
) => runPipelineCommand(db, { ...i, command: "start" }, o);
export const pausePipelineRun = (
  db: PrismaClient,
  i: Omit<TRunCommandInput, "command">,
  o?: TRunCommandOptions,
) => runPipelineCommand(db, { ...i, command: "pause" }, o);
export const resumePipelineRun = (
  db: PrismaClient,
  i: Omit<TRunCommandInput, "command">,
  o?: TRunCommandOptions,
) => runPipelineCommand(db, { ...i, command: "resume" }, o);
export const stopPipelineRun = (
  db: PrismaClient,
  i: Omit<TRunCommandInput, "command">,
  o?: TRunCommandOptions,
) => runPipelineCommand(db, { ...i, command: "stop" }, o);
export const restartPipelineRun = (
  db: PrismaClient,
  i: Omit<TRunCommandInput, "command">,
  o?: TRunCommandOptions,
) => runPipelineCommand(db, { ...i, command: "restart" }, o);
