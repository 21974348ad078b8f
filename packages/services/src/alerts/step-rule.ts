// One rule's lifecycle over one evaluation tick, as a pure function: pending (the condition holds, not
// yet for `forSeconds`) → firing (an episode opens) → resolved once the condition has been clear for
// `clearForSeconds` (hysteresis: a signal that flaps back within that time stays one episode, one page).
// It also decides the episode's notifications: one when it fires, one when it resolves, and a reminder
// only while it stays firing and unacknowledged past `repeatSeconds`. A silence suppresses
// notifications, never the state: an episode that fired while silenced is notified when the silence ends.
import type { TCondition } from "./evaluate-condition";

export interface TRuleTiming {
  forSeconds: number;
  clearForSeconds: number;
  /** 0: no reminders. */
  repeatSeconds: number;
  pendingSince: Date | null;
}

export interface TOpenEpisode {
  state: "firing" | "acknowledged";
  clearSince: Date | null;
  /** When the firing notification was queued; null while it was silenced. */
  notifiedAt: Date | null;
  lastNotifiedAt: Date | null;
}

export type TNotifyKind = "fire" | "resolve" | "reminder";

export type TRuleStep =
  | { action: "idle"; pendingSince: Date | null }
  | { action: "open"; pendingSince: null; startedAt: Date; notify: "fire" | null }
  | { action: "update"; pendingSince: null; clearSince: Date | null; notify: "fire" | "reminder" | null }
  | { action: "resolve"; pendingSince: null; notify: "resolve" | null };

const since = (now: Date, t: Date) => (now.getTime() - t.getTime()) / 1000;

export function stepRule(
  rule: TRuleTiming,
  episode: TOpenEpisode | null,
  cond: Pick<TCondition, "active">,
  silenced: boolean,
  now: Date,
): TRuleStep {
  if (!episode) {
    if (cond.active === null) return { action: "idle", pendingSince: rule.pendingSince };
    if (!cond.active) return { action: "idle", pendingSince: null };
    const pendingSince = rule.pendingSince ?? now;
    if (since(now, pendingSince) < rule.forSeconds) return { action: "idle", pendingSince };
    return { action: "open", pendingSince: null, startedAt: pendingSince, notify: silenced ? null : "fire" };
  }
  // Unknown keeps the clear clock where it is: a gap in the samples neither resolves nor re-arms.
  const clearSince =
    cond.active === true ? null : cond.active === false ? (episode.clearSince ?? now) : episode.clearSince;
  if (clearSince && cond.active === false && since(now, clearSince) >= rule.clearForSeconds) {
    // Nobody was told it fired (silenced throughout): nobody is told it resolved.
    return {
      action: "resolve",
      pendingSince: null,
      notify: !silenced && episode.notifiedAt ? "resolve" : null,
    };
  }
  let notify: "fire" | "reminder" | null = null;
  if (!silenced && !episode.notifiedAt) notify = "fire";
  else if (
    !silenced &&
    episode.state === "firing" &&
    rule.repeatSeconds > 0 &&
    episode.lastNotifiedAt &&
    since(now, episode.lastNotifiedAt) >= rule.repeatSeconds
  )
    notify = "reminder";
  return { action: "update", pendingSince: null, clearSince, notify };
}

/** Whether a silence covers a rule now: not ended, not expired, naming the rule or its pipeline. */
export function isSilenced(
  silences: { pipelineId: string | null; ruleId: string | null; expiresAt: Date; endedAt: Date | null }[],
  rule: { id: string; pipelineId: string | null },
  now: Date,
): boolean {
  return silences.some(
    (s) =>
      !s.endedAt &&
      s.expiresAt > now &&
      (s.ruleId === rule.id || (s.pipelineId !== null && s.pipelineId === rule.pipelineId)),
  );
}
