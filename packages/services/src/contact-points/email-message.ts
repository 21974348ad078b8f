// An alert email: a subject that reads in an inbox list ("[FIRING] critical Backlog growing … on
// payments-ledger v1"), a plain-text body and an HTML one, and threading headers so the fire,
// acknowledge and resolve of one alert sit in one thread (each notification's Message-ID, In-Reply-To
// and References pointing at the alert's first message). The HTML is escaped text, no remote content.
import type { TNotificationFacts } from "../alerts/notification-facts";
import { describeFacts, VERB } from "./notification-words";

export interface TEmailMessage {
  subject: string;
  text: string;
  html: string;
  messageId: string;
  /** The alert's first message, for replies in one thread; absent on the first one. */
  inReplyTo?: string;
}

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** `dedupKey` is the notification's (unique per delivery target), so every email has its own Message-ID. */
export function emailMessage(
  f: TNotificationFacts,
  publicUrl: string | null,
  dedupKey: string,
): TEmailMessage {
  const d = describeFacts(f, publicUrl);
  const subject =
    f.kind === "test"
      ? `[TEST] Sluice test notification for ${f.team}`
      : `[${VERB[f.kind]}] ${f.severity} ${d.title} on ${d.where}`;
  const lines: [string, string][] = [
    ["Alert", f.kind === "test" ? "test" : `#${f.episodeId}`],
    ["Pipeline", d.where],
    ["Severity", f.severity],
    ["Since", f.startedAt],
  ];
  if (d.value) lines.push(["Value vs threshold", d.value]);
  if (d.by) lines.push([f.kind === "acknowledge" ? "Acknowledged" : "Resolved", d.by.trim()]);
  lines.push(["Runbook", d.runbook]);
  if (d.link) lines.push(["Open in Sluice", d.link]);
  const text = [f.summary, "", ...lines.map(([k, v]) => `${k}: ${v}`), "", `To ${f.team} on-call.`].join(
    "\n",
  );
  const html = [
    `<p>${escape(f.summary)}</p>`,
    "<table>",
    ...lines.map(([k, v]) =>
      k === "Open in Sluice"
        ? `<tr><th align="left">${k}</th><td><a href="${escape(v)}">${escape(v)}</a></td></tr>`
        : `<tr><th align="left">${escape(k)}</th><td>${escape(v)}</td></tr>`,
    ),
    "</table>",
    `<p>To ${escape(f.team)} on-call.</p>`,
  ].join("\n");
  const domain = "sluice.alerts";
  const first = `<alert-${f.episodeId}@${domain}>`;
  return {
    subject,
    text,
    html,
    messageId:
      f.kind === "fire" || f.kind === "test"
        ? first
        : `<${dedupKey.replace(/[^A-Za-z0-9_-]+/g, ".")}@${domain}>`,
    ...(f.kind === "fire" || f.kind === "test" ? {} : { inReplyTo: first }),
  };
}
