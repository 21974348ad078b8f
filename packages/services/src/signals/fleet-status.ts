// A pipeline's status on the fleet view, from its run state and its signals. Pure, so the console,
// the alert evaluator and tests decide it the same way. Problems sort first (STATUS_ORDER).
import type { TRunPhase } from "../runs/run-state";

export const FLEET_STATUSES = [
  "failed",
  "lagging",
  "paused",
  "stopped",
  "not started",
  "running",
  "caught up",
] as const;
export type TFleetStatus = (typeof FLEET_STATUSES)[number];
/** Sort key: problems first. */
export const STATUS_ORDER: Record<TFleetStatus, number> = Object.fromEntries(
  FLEET_STATUSES.map((s, i) => [s, i]),
) as Record<TFleetStatus, number>;

/** Seconds of input that may wait before a backlog that keeps growing counts as lagging. */
export const LAGGING_BACKLOG_SECONDS = 30;
/** Seconds of input waiting at most to count as caught up (a trigger of a few seconds leaves some). */
export const CAUGHT_UP_BACKLOG_SECONDS = 10;
/** Consecutive growing samples that make a backlog "rising". */
export const RISING_SAMPLES = 3;

export interface TFleetStatusInput {
  /** null: never started on the workers. */
  phase: TRunPhase | null;
  lastError: string | null;
  /** Backlog at the newest samples, oldest first (one per 10-second bucket). */
  recentBacklog: number[];
  /** Events per second arriving on the topic, recently; null when unknown. */
  inputRate: number | null;
  /** Age of the newest committed row by its Kafka append time (ms); null before the first batch with rows. */
  ingestAgeMs: number | null;
  freshnessTargetMs: number;
}

export interface TFleetStatusResult {
  status: TFleetStatus;
  /** Why, in words on-call can act on (the error's first line for a failed pipeline). */
  reason: string | null;
}

/** The error's first line, which is what fits in a row (the pipeline page has the rest). */
export const firstLine = (error: string | null): string | null => error?.split("\n", 1)[0]?.trim() || null;

/** The backlog grew over the last RISING_SAMPLES samples and now holds more than LAGGING_BACKLOG_SECONDS of input. */
export function isBacklogRising(recent: number[], inputRate: number | null): boolean {
  const last = recent.slice(-RISING_SAMPLES);
  if (last.length < RISING_SAMPLES) return false;
  for (let i = 1; i < last.length; i++) if (last[i]! <= last[i - 1]!) return false;
  return last.at(-1)! > Math.max(1, (inputRate ?? 0) * LAGGING_BACKLOG_SECONDS);
}

export function fleetStatus(s: TFleetStatusInput): TFleetStatusResult {
  if (s.phase === null) return { status: "not started", reason: null };
  if (s.phase === "failed")
    return { status: "failed", reason: firstLine(s.lastError) ?? "failed without an error message" };
  if (s.phase === "stopped" || s.phase === "stopping") return { status: "stopped", reason: null };
  const backlog = s.recentBacklog.at(-1) ?? null;
  const paused = s.phase === "paused" || s.phase === "pausing";
  if (isBacklogRising(s.recentBacklog, s.inputRate)) {
    return {
      status: "lagging",
      reason: `backlog rising (${Math.round(backlog!)} events waiting)${paused ? " while paused" : ""}`,
    };
  }
  if (backlog !== null && backlog > 0 && s.ingestAgeMs !== null && s.ingestAgeMs > s.freshnessTargetMs) {
    return {
      status: "lagging",
      reason: `newest committed row is older than the ${Math.round(s.freshnessTargetMs / 1000)} s freshness target${paused ? " while paused" : ""}`,
    };
  }
  if (paused) return { status: "paused", reason: null };
  const caughtUp = backlog === null || backlog <= Math.max(0, (s.inputRate ?? 0) * CAUGHT_UP_BACKLOG_SECONDS);
  return {
    status: caughtUp ? "caught up" : "running",
    reason: caughtUp ? null : `draining a backlog of ${Math.round(backlog!)} events`,
  };
}
