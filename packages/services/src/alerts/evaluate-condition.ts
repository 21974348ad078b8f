// Whether one rule's condition holds at one tick, with the value on-call reads beside the threshold.
// Pure: the evaluator calls it with signals read from Postgres; tests replay recorded series through it.
// `active: null` means "cannot tell" (too few samples): the rule's state holds, neither pending nor clearing.
import { firstLine } from "../signals/fleet-status";
import type { TFleetAlertSignals, TPipelineAlertSignals } from "./alert-signals";
import { RULE_KIND_INFO, type TRuleKind } from "./rule-kinds";
import { stateFilledAt } from "./state-horizon";

export interface TCondition {
  active: boolean | null;
  value: number | null;
  /** The threshold in force (the spec's target when the rule leaves it empty). */
  threshold: number;
  summary: string;
}

/** Samples of the backlog that must all be growing for "falling behind". */
export const BACKLOG_RISING_SAMPLES = 4;
/** Input is steady when no sample's rate is further than this factor from the median. */
export const STEADY_FACTOR = 1.5;
/** Points of the 30-minute state window needed to judge growth. */
export const STATE_MIN_POINTS = 10;
/** A worker whose heartbeat stopped longer ago than this is gone, not missing (it no longer pages). */
export const WORKER_GONE_MS = 3600_000;
/** A producer fault pages while its values were seen this recently. */
export const PRODUCER_FAULT_WINDOW_MS = 10 * 60_000;
/** A running pipeline counts as stalled only after at least this long, whatever its trigger. */
export const STALL_MIN_MS = 30_000;

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const pct = (x: number) => `${round(x * 100, 2)}%`;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Steady input: every known rate within STEADY_FACTOR of the median (a burst is not steady). */
export function isInputSteady(rates: (number | null)[]): boolean | null {
  const known = rates.filter((r): r is number => r !== null);
  if (known.length < 3) return null;
  const m = median(known);
  // Slack of 1 event/s keeps a near-idle topic's noise from counting as unsteady.
  return known.every((r) => r <= m * STEADY_FACTOR + 1 && r >= m / STEADY_FACTOR - 1);
}

/** "; paused by ana@… 12 min ago: “upstream incident” — resume it to drain" — a backlog someone caused on purpose. */
function heldSummary(held: TPipelineAlertSignals["heldBy"], now: Date): string {
  if (!held) return "";
  const mins = Math.max(0, Math.round((now.getTime() - held.at.getTime()) / 60_000));
  const what = held.action === "pause" ? "paused" : "stopped";
  const undo = held.action === "pause" ? "resume" : "start";
  return `; ${what} by ${held.actor} ${mins} min ago${held.reason ? `: “${held.reason}”` : " (no reason given)"} — ${undo} it to drain`;
}

/** What each rate rule counts over the window's rows, and its threshold when the rule leaves it empty. */
const RATE_OF: Record<
  "violation_rate" | "dead_letter_rate" | "late_rate",
  (s: TPipelineAlertSignals) => { count: number; what: string; defaultLimit: number }
> = {
  violation_rate: (s) => ({
    count: s.window.violations,
    what: "violate an expectation",
    defaultLimit: s.violationTarget,
  }),
  dead_letter_rate: (s) => ({
    count: s.window.quarantinedOrDead,
    what: "quarantined or dead-lettered",
    defaultLimit: 0.01,
  }),
  late_rate: (s) => ({
    count: s.window.late,
    what: "too late to count",
    defaultLimit: RULE_KIND_INFO.late_rate.defaults.threshold!,
  }),
};

/**
 * The signals a rule scoped to one output judges: that output's window (rows that reached it, its late
 * rows, its expectations' violations) and state, the rest the pipeline's. null when the serving
 * version does not declare the output (a new version dropped or renamed it).
 */
export function outputView(s: TPipelineAlertSignals, output: string): TPipelineAlertSignals | null {
  const o = s.outputs.find((x) => x.name === output);
  return o ? { ...s, window: o.window, stateRows: o.stateRows } : null;
}

/** A rule's condition: the pipeline's, or that of the one output it is scoped to (pages name the output beside the pipeline). */
export function evaluateRuleCondition(
  kind: TRuleKind,
  threshold: number | null,
  output: string | null,
  s: TPipelineAlertSignals,
  now: Date,
): TCondition {
  if (output === null) return evaluatePipelineCondition(kind, threshold, s, now);
  const view = outputView(s, output);
  if (!view)
    return {
      active: false,
      value: null,
      threshold: threshold ?? 0,
      summary: `output ${output}: not declared by the serving version${s.version !== null ? ` (v${s.version})` : ""}, nothing to judge`,
    };
  return evaluatePipelineCondition(kind, threshold, view, now);
}

export function evaluatePipelineCondition(
  kind: TRuleKind,
  threshold: number | null,
  s: TPipelineAlertSignals,
  now: Date,
): TCondition {
  const backlog = s.recent.at(-1)?.backlog ?? null;
  const rates = s.recent.map((p) => p.inputRate).filter((r): r is number => r !== null);
  const inputRate = rates.length > 0 ? rates.reduce((a, b) => a + b, 0) / rates.length : null;
  switch (kind) {
    case "backlog_growing": {
      const limit = threshold ?? 30;
      const last = s.recent.slice(-BACKLOG_RISING_SAMPLES).map((p) => p.backlog);
      if (last.length < BACKLOG_RISING_SAMPLES || last.some((b) => b === null))
        return { active: null, value: null, threshold: limit, summary: "not enough offset samples yet" };
      const rising = last.every((b, i) => i === 0 || b! > last[i - 1]!);
      const steady = isInputSteady(s.recent.slice(-BACKLOG_RISING_SAMPLES - 1).map((p) => p.inputRate));
      const seconds = inputRate && inputRate > 0 ? backlog! / inputRate : backlog!;
      const active = rising && steady === true && seconds > limit;
      return {
        active,
        value: round(seconds, 1),
        threshold: limit,
        summary: `backlog ${Math.round(backlog!)} events (${round(seconds, 1)} s of input) ${rising ? "rising" : "not rising"}, input ${steady ? "steady" : "not steady"} at ${round(inputRate ?? 0, 1)}/s${heldSummary(s.heldBy, now)}`,
      };
    }
    case "processing_below_input": {
      const ratio = threshold ?? 0.9;
      if (inputRate === null)
        return { active: null, value: null, threshold: ratio, summary: "input rate unknown" };
      if (inputRate <= 0 || !backlog)
        return { active: false, value: null, threshold: ratio, summary: "no input waiting" };
      const value = s.processingRate / inputRate;
      return {
        active: value < ratio,
        value: round(value, 3),
        threshold: ratio,
        summary: `processing ${round(s.processingRate, 1)}/s vs input ${round(inputRate, 1)}/s`,
      };
    }
    case "freshness": {
      const limit = threshold ?? s.freshnessTargetMs / 1000;
      if (s.ingestAgeMs === null)
        return { active: null, value: null, threshold: limit, summary: "nothing committed yet" };
      const age = s.ingestAgeMs / 1000;
      // No input waiting is not stale: an idle topic has nothing newer to deliver.
      const active = (backlog ?? 0) > 0 && age > limit;
      return {
        active,
        value: round(age, 1),
        threshold: limit,
        summary: `newest committed row arrived ${Math.round(age)} s ago, ${Math.round(backlog ?? 0)} events waiting`,
      };
    }
    case "violation_rate":
    case "dead_letter_rate":
    case "late_rate": {
      const { count, what, defaultLimit } = RATE_OF[kind](s);
      const limit = threshold ?? defaultLimit;
      if (s.window.inputRows <= 0)
        return { active: false, value: null, threshold: limit, summary: "no input in the last 5 minutes" };
      const rate = count / s.window.inputRows;
      return {
        active: rate > limit,
        value: round(rate, 4),
        threshold: limit,
        summary: `${pct(rate)} of ${s.window.inputRows} rows ${what} (last 5 min)`,
      };
    }
    case "batch_failures": {
      const limit = threshold ?? 3;
      const failed = s.phase === "failed";
      const active = failed || s.consecutiveFailures >= limit;
      const why = firstLine(s.lastError);
      return {
        active,
        value: s.consecutiveFailures,
        threshold: limit,
        summary: failed
          ? `pipeline failed: ${why ?? "no error message"}`
          : `${s.consecutiveFailures} consecutive failed batch attempts${why ? `: ${why}` : ""}`,
      };
    }
    case "state_growth": {
      const limit = threshold ?? 0.5;
      // State rightly grows until the spec's horizon has filled (dedup within, watermark delay,
      // lateness, window size): only growth after that is growth without bound.
      if (s.stateSince === null)
        return { active: false, value: null, threshold: limit, summary: "no state committed yet" };
      const filledAt = stateFilledAt(s.stateSince, s.stateHorizon);
      if (now.getTime() < filledAt.getTime())
        return {
          active: false,
          value: null,
          threshold: limit,
          summary: `state still filling its horizon (${s.stateHorizon?.why ?? "no event-time state"}): growth is judged from ${filledAt.toISOString()}`,
        };
      const points = s.stateRows.filter((p) => p.t.getTime() >= filledAt.getTime()).map((p) => p.rows);
      if (points.length < STATE_MIN_POINTS)
        return {
          active: null,
          value: null,
          threshold: limit,
          summary: "less than 10 minutes of state history since the horizon filled",
        };
      const first = points[0]!;
      const last = points.at(-1)!;
      const growth = (last - first) / Math.max(1, first);
      const monotonic = points.every((x, i) => i === 0 || x >= points[i - 1]!);
      const steady = isInputSteady(s.stateWindowInputRates);
      return {
        active: monotonic && steady === true && growth > limit,
        value: round(growth, 3),
        threshold: limit,
        summary: `state rows ${first} → ${last} over ${points.length} min after its horizon filled (${monotonic ? "never shrinking" : "shrinking at times"}), input ${steady ? "steady" : "not steady"}`,
      };
    }
    case "webhook_failures": {
      const limit = threshold ?? 1;
      return {
        active: s.webhookFailures >= limit,
        value: s.webhookFailures,
        threshold: limit,
        summary: `${s.webhookFailures} webhook deliveries failed for good in the last 5 minutes`,
      };
    }
    case "producer_fault": {
      const limit = threshold ?? 1;
      const recent = s.producerFaults.filter(
        (f) => now.getTime() - f.lastSeen.getTime() <= PRODUCER_FAULT_WINDOW_MS,
      );
      const rows = recent.reduce((n, f) => n + f.rows, 0);
      if (recent.length === 0)
        return {
          active: false,
          value: null,
          threshold: limit,
          summary: "no values outside the contract's types in the last 10 minutes",
        };
      const what = recent
        .map(
          (f) =>
            `${f.field} (declared ${f.declaredType ?? "?"}) arrives as ${Object.entries(f.types)
              .filter(([, n]) => n > 0)
              .sort((a, b) => b[1] - a[1])
              .map(([t, n]) => `${t} × ${n}`)
              .join(", ")}`,
        )
        .join("; ");
      const sample = recent.find((f) => f.sample)?.sample;
      const shown = sample ? JSON.stringify(sample) : "";
      return {
        active: rows >= limit,
        value: rows,
        threshold: limit,
        summary: `the producer sends values no contract type holds: ${what} — ${rows} rows quarantined${shown ? `; sample ${shown.length > 240 ? `${shown.slice(0, 240)}…` : shown}` : ""}`,
      };
    }
    case "batch_stalled": {
      const limit = threshold ?? 10;
      if (s.phase !== "running" || !s.waitingSince || !s.triggerMs)
        return { active: false, value: null, threshold: limit, summary: "not running on a trigger" };
      const waitedMs = Math.max(0, now.getTime() - s.waitingSince.getTime());
      const intervals = waitedMs / s.triggerMs;
      return {
        active: intervals >= limit && waitedMs >= STALL_MIN_MS,
        value: round(intervals, 1),
        threshold: limit,
        summary: `no batch for ${Math.round(waitedMs / 1000)} s (${round(intervals, 1)} trigger intervals of ${s.triggerMs / 1000} s)`,
      };
    }
    default:
      return { active: false, value: null, threshold: threshold ?? 0, summary: `${kind} is a fleet rule` };
  }
}

export function evaluateFleetCondition(
  kind: TRuleKind,
  threshold: number | null,
  s: TFleetAlertSignals,
  now: Date,
): TCondition {
  const limit = threshold ?? 30;
  const alive = s.workers.filter((w) => w.stoppedAt === null);
  const age = (w: { lastHeartbeatAt: Date }) => (now.getTime() - w.lastHeartbeatAt.getTime()) / 1000;
  if (kind === "worker_heartbeat_missing") {
    const missing = alive.filter((w) => age(w) > limit && age(w) * 1000 < WORKER_GONE_MS);
    const worst = missing.length > 0 ? Math.max(...missing.map(age)) : null;
    return {
      active: missing.length > 0,
      value: worst === null ? null : Math.round(worst),
      threshold: limit,
      summary:
        missing.length > 0
          ? `no heartbeat from ${missing.map((w) => w.id).join(", ")}`
          : `${alive.length} workers heartbeating`,
    };
  }
  if (kind === "no_worker_alive") {
    const newest = alive.length > 0 ? Math.min(...alive.map(age)) : null;
    if (s.runningPipelines === 0)
      return {
        active: false,
        value: newest === null ? null : Math.round(newest),
        threshold: limit,
        summary: "no pipeline should be running",
      };
    const active = newest === null || newest > limit;
    return {
      active,
      value: newest === null ? null : Math.round(newest),
      threshold: limit,
      summary:
        newest === null
          ? `no worker has ever registered; ${s.runningPipelines} pipeline versions should be running`
          : `newest worker heartbeat ${Math.round(newest)} s ago; ${s.runningPipelines} pipeline versions should be running`,
    };
  }
  return { active: false, value: null, threshold: limit, summary: `${kind} is a pipeline rule` };
}
