// The notification body: Slack-compatible (`text` for clients that show only that, `blocks` for the
// rest; any receiver that accepts Slack's incoming-webhook format accepts it). It says what fired,
// where (pipeline and version), since when, the value against the threshold, what to do, and links to
// the pipeline page.
import type { TNotifyKind } from "./step-rule";
import { RULE_KIND_INFO, type TRuleKind, type TSeverity } from "./rule-kinds";

export interface TNotificationFacts {
  kind: TNotifyKind;
  episodeId: string;
  rule: TRuleKind;
  severity: TSeverity;
  pipeline: string | null;
  version: number | null;
  team: string;
  startedAt: Date;
  value: number | null;
  threshold: number | null;
  summary: string;
  /** The console's address (SLUICE_PUBLIC_URL); null: no link. */
  publicUrl: string | null;
  resolvedAt?: Date | null;
}

export interface TSlackPayload {
  text: string;
  blocks: (
    | { type: "header"; text: { type: "plain_text"; text: string } }
    | { type: "section"; text: { type: "mrkdwn"; text: string }; fields?: { type: "mrkdwn"; text: string }[] }
    | { type: "context"; elements: { type: "mrkdwn"; text: string }[] }
  )[];
}

const VERB: Record<TNotifyKind, string> = { fire: "FIRING", reminder: "STILL FIRING", resolve: "RESOLVED" };

export function pipelineLink(publicUrl: string | null, pipeline: string | null): string | null {
  if (!publicUrl) return null;
  const base = publicUrl.replace(/\/+$/, "");
  return pipeline ? `${base}/pipelines/${encodeURIComponent(pipeline)}` : `${base}/alerts`;
}

export function slackPayload(f: TNotificationFacts): TSlackPayload {
  const info = RULE_KIND_INFO[f.rule];
  const where = f.pipeline ? `${f.pipeline}${f.version !== null ? ` v${f.version}` : ""}` : "the fleet";
  const link = pipelineLink(f.publicUrl, f.pipeline);
  const value = `${f.value ?? "—"} (threshold ${f.threshold ?? "—"} ${info.unit})`;
  const text = `[${VERB[f.kind]}] ${f.severity} ${info.title} on ${where}: ${f.summary}${link ? ` — ${link}` : ""}`;
  const fields = [
    { type: "mrkdwn" as const, text: `*Pipeline*\n${where}` },
    { type: "mrkdwn" as const, text: `*Severity*\n${f.severity}` },
    { type: "mrkdwn" as const, text: `*Since*\n${f.startedAt.toISOString()}` },
    { type: "mrkdwn" as const, text: `*Value vs threshold*\n${value}` },
  ];
  if (f.kind === "resolve" && f.resolvedAt)
    fields.push({ type: "mrkdwn", text: `*Resolved*\n${f.resolvedAt.toISOString()}` });
  return {
    text,
    blocks: [
      { type: "header", text: { type: "plain_text", text: `${VERB[f.kind]}: ${info.title}`.slice(0, 150) } },
      { type: "section", text: { type: "mrkdwn", text: f.summary }, fields },
      { type: "section", text: { type: "mrkdwn", text: `*Runbook:* ${info.runbook}` } },
      {
        type: "context",
        elements: [
          {
            type: "mrkdwn",
            text: `${link ? `<${link}|Open ${f.pipeline ?? "alerts"} in Sluice> · ` : ""}alert #${f.episodeId} · to ${f.team} on-call`,
          },
        ],
      },
    ],
  };
}
