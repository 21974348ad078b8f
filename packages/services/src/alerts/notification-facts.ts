// What a notification says, independent of where it goes: stored in the outbox row (`payload`) when
// it is queued, and rendered per contact point at delivery (contact-points/render-notification.ts) —
// the same facts render the same bytes on every attempt. The console's address is not a fact: the
// deliverer adds it (SLUICE_PUBLIC_URL), so a notification queued by the console links like the rest.
import type { TRuleKind, TSeverity } from "./rule-kinds";

/** fire, reminder and resolve come from the evaluator; acknowledge and a manual resolve from a person; test from the Admin page. */
export type TNotificationKind = "fire" | "reminder" | "acknowledge" | "resolve" | "test";

export interface TNotificationFacts {
  kind: TNotificationKind;
  /** The alert's number; one PagerDuty incident per alert (its dedup key is derived from it). */
  episodeId: string;
  rule: TRuleKind;
  severity: TSeverity;
  pipeline: string | null;
  version: number | null;
  /** The one output of the pipeline the rule watches; absent or null: the pipeline as a whole. */
  output?: string | null;
  team: string;
  /** ISO timestamps (the row is JSON). */
  startedAt: string;
  value: number | null;
  threshold: number | null;
  summary: string;
  /** acknowledge / resolve: who, and their note. */
  actor?: string | null;
  note?: string | null;
  resolvedAt?: string | null;
}

/** The facts of a test notification: a harmless made-up alert, marked as a test everywhere it shows. */
export function testFacts(team: string, by: string, now: Date): TNotificationFacts {
  return {
    kind: "test",
    episodeId: `test-${now.getTime()}`,
    rule: "backlog_growing",
    severity: "info",
    pipeline: null,
    version: null,
    team,
    startedAt: now.toISOString(),
    value: null,
    threshold: null,
    summary: `Test notification sent by ${by} from the Admin page: if you can read this, ${team}'s on-call is reachable here.`,
    actor: by,
  };
}
