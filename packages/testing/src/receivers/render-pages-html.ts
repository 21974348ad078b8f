// The on-call receiver's page: what was paged, newest first, and the state of every PagerDuty incident
// — plain HTML (escaped text, no script), refreshing itself every 5 seconds.
import type { TReceivedPage } from "./received-page";

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

export function renderPagesHtml(
  pages: TReceivedPage[],
  incidents: Map<string, { state: string; events: string[] }>,
): string {
  const rows = [...pages]
    .reverse()
    .map(
      (p) =>
        `<tr><td>${esc(p.at.replace("T", " ").slice(0, 19))}</td><td>${esc(p.channel)}</td><td>${esc(p.to)}</td><td><b>${esc(p.action)}</b></td><td>${esc(p.key)}</td><td>${esc(p.summary)}</td></tr>`,
    )
    .join("\n");
  const open = [...incidents.entries()]
    .map(
      ([key, i]) =>
        `<tr><td>${esc(key)}</td><td><b>${esc(i.state)}</b></td><td>${esc(i.events.join(" → "))}</td></tr>`,
    )
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="5">
<title>Sluice demo on-call receiver — what was paged</title>
<style>body{font:14px system-ui,sans-serif;margin:24px;color:#1f2328}table{border-collapse:collapse;width:100%;margin-bottom:24px}td,th{border-bottom:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top;overflow-wrap:break-word}td:not(:last-child),th{white-space:nowrap}td:last-child{width:100%}th{background:#f6f8fa}</style>
</head><body>
<h1>What was paged</h1>
<p>The quick start's demo teams page this receiver: Slack messages (POST /slack/&lt;channel&gt;), PagerDuty Events API v2 (POST /pagerduty/v2/enqueue), Sluice webhook events (POST /oncall/hooks/&lt;name&gt;) and email (SMTP). Newest first; this page refreshes every 5 seconds. JSON: <a href="/pages.json">/pages.json</a>.</p>
<h2>PagerDuty incidents (${incidents.size})</h2>
<table><thead><tr><th>dedup_key</th><th>state</th><th>events</th></tr></thead><tbody>${open || '<tr><td colspan="3">none yet</td></tr>'}</tbody></table>
<h2>Received (${pages.length})</h2>
<table><thead><tr><th>at (UTC)</th><th>channel</th><th>to</th><th>action</th><th>key</th><th>summary</th></tr></thead><tbody>${rows || '<tr><td colspan="6">nothing paged yet — pause a pipeline (or send a test notification from the Admin page) and watch this page</td></tr>'}</tbody></table>
</body></html>`;
}
