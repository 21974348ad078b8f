// The run-state machine of a pipeline version, as pure functions: which lifecycle command is allowed
// from which state, and what it changes. Postgres stores two columns — `desired_state` (what an
// operator asked for) and `status` (what the workers are doing) — and a batch in flight is never cut
// short: a pause or stop asked for during a batch takes effect when the batch has committed.
import type { PipelineDesiredState, PipelineRunStatus } from "@sluice/db";
import { ServiceError } from "../service-error";

export type TRunStatus = PipelineRunStatus;
export type TDesiredState = PipelineDesiredState;
export type TRunCommand = "start" | "pause" | "resume" | "stop" | "restart";
export const RUN_COMMANDS: readonly TRunCommand[] = ["start", "pause", "resume", "stop", "restart"];

/** What a person sees: `pausing` / `stopping` while the in-flight batch finishes. */
export type TRunPhase = "running" | "pausing" | "stopping" | "paused" | "stopped" | "failed";

export function runPhase(status: TRunStatus, desired: TDesiredState): TRunPhase {
  if (status !== "running" || desired === "running") return status;
  return desired === "paused" ? "pausing" : "stopping";
}

export interface TRunCommandEffect {
  /** Nothing to do: the version is already where the command leads. */
  noop: boolean;
  desired: TDesiredState;
  /** The new status. `running` → `paused`/`stopped` only when no batch is in flight. */
  status: TRunStatus;
  /** A new scheduling turn begins (the version starts running again from a non-running status). */
  newTurn: boolean;
  /** Failure fields are cleared (start, restart). */
  clearFailure: boolean;
}

/** A lifecycle command the run's phase does not allow (a conflict), with both. */
export class RunCommandError extends ServiceError {
  constructor(
    message: string,
    readonly command: TRunCommand,
    readonly phase: TRunPhase,
  ) {
    super(message, "conflict");
  }
}

/** Which phases each command may be applied from (the target phase itself is a no-op). */
const ALLOWED: Record<TRunCommand, { from: TRunPhase[]; noopIn: TRunPhase[]; hint: string }> = {
  start: {
    from: ["stopped", "stopping"],
    noopIn: ["running"],
    hint: "start applies to a stopped pipeline version",
  },
  pause: {
    from: ["running"],
    noopIn: ["pausing", "paused"],
    hint: "pause applies to a running pipeline version",
  },
  resume: {
    from: ["paused", "pausing"],
    noopIn: ["running"],
    hint: "resume applies to a paused pipeline version",
  },
  stop: {
    from: ["running", "pausing", "paused", "failed"],
    noopIn: ["stopping", "stopped"],
    hint: "stop applies to a running, paused or failed pipeline version",
  },
  restart: { from: ["failed"], noopIn: ["running"], hint: "restart applies to a failed pipeline version" },
};

const SUGGESTION: Partial<Record<TRunPhase, string>> = {
  paused: "use resume",
  pausing: "use resume",
  failed: "use restart (after fixing the cause), or stop",
  stopped: "use start",
  stopping: "use start",
  running: "use pause or stop",
};

/**
 * The effect of `command` on a version in (status, desired). `batchInFlight`: a live worker is running
 * a batch of this version now, so a pause/stop only changes the desired state and the worker settles
 * the status after its commit. Throws RunCommandError when the command does not apply.
 */
export function applyRunCommand(
  command: TRunCommand,
  status: TRunStatus,
  desired: TDesiredState,
  batchInFlight: boolean,
): TRunCommandEffect {
  const phase = runPhase(status, desired);
  const rule = ALLOWED[command];
  if (rule.noopIn.includes(phase))
    return { noop: true, desired, status, newTurn: false, clearFailure: false };
  if (!rule.from.includes(phase)) {
    const suggestion = SUGGESTION[phase];
    throw new RunCommandError(
      `cannot ${command}: the pipeline version is ${phase}; ${rule.hint}${suggestion ? ` — ${suggestion}` : ""}`,
      command,
      phase,
    );
  }
  switch (command) {
    case "start":
    case "resume":
    case "restart":
      // From `stopping`/`pausing` the version is still running: only the wish changes back.
      return {
        noop: false,
        desired: "running",
        status: "running",
        newTurn: status !== "running",
        clearFailure: command !== "resume",
      };
    case "pause":
    case "stop": {
      const target = command === "pause" ? "paused" : "stopped";
      const settleNow = status !== "running" || !batchInFlight;
      return {
        noop: false,
        desired: target,
        status: settleNow ? target : "running",
        newTurn: false,
        clearFailure: false,
      };
    }
  }
}
