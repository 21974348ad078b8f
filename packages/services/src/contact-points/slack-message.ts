// A Slack incoming-webhook message (https://api.slack.com/messaging/webhooks): `text` for clients
// and notifications that show only that, `blocks` (Block Kit) for the rest. Slack cannot update a
// message sent through an incoming webhook, so acknowledge and resolve are messages of their own that
// name the alert's number. Block Kit limits: header text 150 characters, section text 3,000, a field 2,000.
import type { TNotificationFacts } from "../alerts/notification-facts";
import { describeFacts, VERB } from "./notification-words";

export interface TSlackMessage {
  text: string;
  blocks: (
    | { type: "header"; text: { type: "plain_text"; text: string } }
    | { type: "section"; text: { type: "mrkdwn"; text: string }; fields?: { type: "mrkdwn"; text: string }[] }
    | { type: "context"; elements: { type: "mrkdwn"; text: string }[] }
  )[];
}

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function slackMessage(f: TNotificationFacts, publicUrl: string | null): TSlackMessage {
  const d = describeFacts(f, publicUrl);
  const text = `${d.headline}${d.link ? ` — ${d.link}` : ""}`;
  const fields = [
    { type: "mrkdwn" as const, text: `*Pipeline*\n${d.where}` },
    { type: "mrkdwn" as const, text: `*Severity*\n${f.severity}` },
    { type: "mrkdwn" as const, text: `*Since*\n${f.startedAt}` },
  ];
  if (d.value) fields.push({ type: "mrkdwn", text: `*Value vs threshold*\n${d.value}` });
  if (f.kind === "acknowledge" || f.kind === "resolve")
    fields.push({
      type: "mrkdwn",
      text: `*${f.kind === "acknowledge" ? "Acknowledged" : "Resolved"}*\n${cut(d.by.replace(/^ /, ""), 1900) || "—"}`,
    });
  return {
    text: cut(text, 3000),
    blocks: [
      { type: "header", text: { type: "plain_text", text: cut(`${VERB[f.kind]}: ${d.title}`, 150) } },
      { type: "section", text: { type: "mrkdwn", text: cut(f.summary, 3000) }, fields },
      { type: "section", text: { type: "mrkdwn", text: cut(`*Runbook:* ${d.runbook}`, 3000) } },
      {
        type: "context",
        elements: [
          {
            type: "mrkdwn",
            text: `${d.link ? `<${d.link}|Open ${f.pipeline ?? "alerts"} in Sluice> · ` : ""}${f.kind === "test" ? "test" : `alert #${f.episodeId}`} · to ${f.team} on-call`,
          },
        ],
      },
    ],
  };
}
