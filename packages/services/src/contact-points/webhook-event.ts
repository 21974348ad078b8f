// Sluice's own webhook event, for receivers that are neither Slack nor PagerDuty (an incident tool, a
// chat bridge, a script): one JSON object per notification, documented in docs/alerting/README.md
// ("Contact points"). `type` says what happened; `alert` carries every fact; `text` is the one-line
// summary a human-facing receiver can show as it is.
import type { TNotificationFacts } from "../alerts/notification-facts";
import { describeFacts } from "./notification-words";

const TYPE = {
  fire: "alert.fired",
  reminder: "alert.reminder",
  acknowledge: "alert.acknowledged",
  resolve: "alert.resolved",
  test: "test",
} as const;

export interface TWebhookEvent {
  type: (typeof TYPE)[keyof typeof TYPE];
  text: string;
  alert: {
    id: string;
    rule: string;
    title: string;
    severity: string;
    pipeline: string | null;
    version: number | null;
    /** The output of the pipeline the rule watches; null: the pipeline as a whole. */
    output: string | null;
    team: string;
    startedAt: string;
    value: number | null;
    threshold: number | null;
    unit: string;
    summary: string;
    runbook: string;
    url: string | null;
    by: string | null;
    note: string | null;
    resolvedAt: string | null;
  };
}

export function webhookEvent(f: TNotificationFacts, publicUrl: string | null): TWebhookEvent {
  const d = describeFacts(f, publicUrl);
  return {
    type: TYPE[f.kind],
    text: `${d.headline}${d.link ? ` — ${d.link}` : ""}`,
    alert: {
      id: f.episodeId,
      rule: f.rule,
      title: d.title,
      severity: f.severity,
      pipeline: f.pipeline,
      version: f.version,
      output: f.output ?? null,
      team: f.team,
      startedAt: f.startedAt,
      value: f.value,
      threshold: f.threshold,
      unit: d.info.unit,
      summary: f.summary,
      runbook: d.runbook,
      url: d.link,
      by: f.actor ?? null,
      note: f.note ?? null,
      resolvedAt: f.resolvedAt ?? null,
    },
  };
}
