// The words every contact point shares, so Slack, PagerDuty, email and the webhook event say the same
// thing: the verb of each notification kind, where it fired, the value against the threshold with its
// unit, and the link to the console page on-call should open.
import { formatRuleValue, RULE_KIND_INFO } from "../alerts/rule-kinds";
import type { TNotificationFacts, TNotificationKind } from "../alerts/notification-facts";

export const VERB: Record<TNotificationKind, string> = {
  fire: "FIRING",
  reminder: "STILL FIRING",
  acknowledge: "ACKNOWLEDGED",
  resolve: "RESOLVED",
  test: "TEST",
};

export function pipelineLink(publicUrl: string | null, pipeline: string | null): string | null {
  if (!publicUrl) return null;
  const base = publicUrl.replace(/\/+$/, "");
  return pipeline ? `${base}/pipelines/${encodeURIComponent(pipeline)}` : `${base}/alerts`;
}

export function describeFacts(f: TNotificationFacts, publicUrl: string | null) {
  const info = RULE_KIND_INFO[f.rule];
  const where = f.pipeline
    ? `${f.pipeline}${f.version !== null ? ` v${f.version}` : ""}${f.output ? `, output ${f.output}` : ""}`
    : "the fleet";
  const value =
    f.value === null && f.threshold === null
      ? null
      : `${formatRuleValue(f.rule, f.value)} (threshold ${formatRuleValue(f.rule, f.threshold)})`;
  const title = f.kind === "test" ? "Test notification" : info.title;
  const by =
    f.kind === "acknowledge" || (f.kind === "resolve" && f.actor && f.actor !== "auto")
      ? ` by ${f.actor}${f.note ? `: “${f.note}”` : ""}`
      : f.kind === "resolve"
        ? " (its condition cleared)"
        : "";
  const headline =
    f.kind === "test"
      ? `[TEST] ${f.summary}`
      : `[${VERB[f.kind]}] ${f.severity} ${title} on ${where}${by}: ${f.summary}`;
  return {
    info,
    title,
    where,
    value,
    by,
    headline,
    link: f.kind === "test" ? pipelineLink(publicUrl, null) : pipelineLink(publicUrl, f.pipeline),
    runbook: f.kind === "test" ? "Nothing to do: this was a test." : info.runbook,
  };
}
