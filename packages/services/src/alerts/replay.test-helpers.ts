// Replays a recorded series of signals through evaluatePipelineCondition + stepRule, the way the
// evaluator does tick by tick, and returns the notifications that would be queued.
import type { TPipelineAlertSignals } from "./alert-signals";
import { evaluatePipelineCondition } from "./evaluate-condition";
import { RULE_KIND_INFO, type TRuleKind } from "./rule-kinds";
import { stepRule, type TNotifyKind, type TOpenEpisode } from "./step-rule";

export const T0 = new Date("2026-12-01T10:00:00Z");
export const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

export function baseSignals(over: Partial<TPipelineAlertSignals> = {}): TPipelineAlertSignals {
  return {
    pipelineId: "p1",
    pipeline: "ledger",
    version: 3,
    ownerTeamId: "t1",
    phase: "running",
    lastError: null,
    heldBy: null,
    consecutiveFailures: 0,
    triggerMs: 2000,
    waitingSince: null,
    recent: [],
    processingRate: 100,
    ingestAgeMs: 1000,
    freshnessTargetMs: 300_000,
    violationTarget: 0.01,
    window: { inputRows: 30_000, violations: 0, quarantinedOrDead: 0, late: 0 },
    outputs: [],
    stateRows: [],
    stateHorizon: null,
    stateSince: null,
    stateWindowInputRates: [],
    webhookFailures: 0,
    producerFaults: [],
    ...over,
  };
}

/** Backlog points every 10 s ending at `now`, from a list of backlogs and a constant or listed input rate. */
export function backlogSeries(
  now: Date,
  backlogs: number[],
  rate: number | number[],
): TPipelineAlertSignals["recent"] {
  return backlogs.map((b, i) => ({
    t: new Date(now.getTime() - (backlogs.length - 1 - i) * 10_000),
    backlog: b,
    inputRate: Array.isArray(rate) ? (rate[i] ?? null) : rate,
  }));
}

export interface TReplayTick {
  t: number;
  signals: TPipelineAlertSignals;
  silenced?: boolean;
  acknowledge?: boolean;
}

export function replay(
  kind: TRuleKind,
  ticks: TReplayTick[],
  over: {
    threshold?: number | null;
    forSeconds?: number;
    clearForSeconds?: number;
    repeatSeconds?: number;
  } = {},
) {
  const d = RULE_KIND_INFO[kind].defaults;
  const rule = {
    forSeconds: over.forSeconds ?? d.forSeconds,
    clearForSeconds: over.clearForSeconds ?? d.clearForSeconds,
    repeatSeconds: over.repeatSeconds ?? 3600,
    pendingSince: null as Date | null,
  };
  let episode = null as TOpenEpisode | null;
  const notifications: { t: number; kind: TNotifyKind }[] = [];
  const episodes: { opened: number; resolved: number | null }[] = [];
  for (const tick of ticks) {
    const now = at(tick.t);
    if (tick.acknowledge && episode) episode = { ...episode, state: "acknowledged" };
    const cond = evaluatePipelineCondition(
      kind,
      over.threshold === undefined ? d.threshold : over.threshold,
      tick.signals,
      now,
    );
    const step = stepRule(rule, episode, cond, tick.silenced ?? false, now);
    rule.pendingSince = step.pendingSince;
    if (step.action === "open") {
      episode = {
        state: "firing",
        clearSince: null,
        notifiedAt: step.notify ? now : null,
        lastNotifiedAt: step.notify ? now : null,
      };
      episodes.push({ opened: tick.t, resolved: null });
    } else if (step.action === "update" && episode) {
      episode = {
        ...episode,
        clearSince: step.clearSince,
        ...(step.notify ? { lastNotifiedAt: now } : {}),
        ...(step.notify === "fire" ? { notifiedAt: now } : {}),
      };
    } else if (step.action === "resolve") {
      episode = null;
      episodes.at(-1)!.resolved = tick.t;
    }
    if (step.action !== "idle" && step.notify) notifications.push({ t: tick.t, kind: step.notify });
  }
  return { notifications, episodes };
}
