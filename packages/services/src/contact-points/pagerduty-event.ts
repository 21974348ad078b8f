// A PagerDuty Events API v2 event (POST https://events.pagerduty.com/v2/enqueue): `trigger` when an
// alert fires (a reminder re-triggers the same alert, which PagerDuty deduplicates), `acknowledge`
// when someone acknowledges it in Sluice, `resolve` when it resolves — all with one dedup_key per
// alert, so acknowledging or resolving in Sluice acknowledges or resolves the incident. The routing
// key is a secret: the deliverer adds it to the event just before sending, it is never stored here.
import type { TNotificationFacts } from "../alerts/notification-facts";
import { describeFacts } from "./notification-words";

export const PAGERDUTY_EVENTS_URL = "https://events.pagerduty.com/v2/enqueue";

export type TPagerDutyAction = "trigger" | "acknowledge" | "resolve";

export interface TPagerDutyEvent {
  event_action: TPagerDutyAction;
  dedup_key: string;
  payload?: {
    summary: string;
    source: string;
    severity: "critical" | "error" | "warning" | "info";
    timestamp: string;
    component?: string;
    group?: string;
    class: string;
    custom_details: Record<string, string | number | null>;
  };
  client?: string;
  client_url?: string;
  links?: { href: string; text: string }[];
}

/** One incident per Sluice alert (PagerDuty allows 255 characters). */
export const pagerDutyDedupKey = (episodeId: string) => `sluice-alert-${episodeId}`;

export function pagerDutyEvent(f: TNotificationFacts, publicUrl: string | null): TPagerDutyEvent {
  const dedup_key = pagerDutyDedupKey(f.episodeId);
  if (f.kind === "acknowledge") return { event_action: "acknowledge", dedup_key };
  if (f.kind === "resolve") return { event_action: "resolve", dedup_key };
  const d = describeFacts(f, publicUrl);
  return {
    event_action: "trigger",
    dedup_key,
    payload: {
      summary: d.headline.slice(0, 1024),
      source: f.pipeline ?? "sluice-fleet",
      severity: f.severity,
      timestamp: f.startedAt,
      ...(f.version !== null ? { component: `v${f.version}` } : {}),
      group: f.team,
      class: f.kind === "test" ? "test" : f.rule,
      custom_details: {
        alert: f.kind === "test" ? "test" : `#${f.episodeId}`,
        condition: f.summary,
        value_vs_threshold: d.value,
        runbook: d.runbook,
      },
    },
    client: "Sluice",
    ...(d.link
      ? { client_url: d.link, links: [{ href: d.link, text: `Open ${f.pipeline ?? "alerts"} in Sluice` }] }
      : {}),
  };
}
