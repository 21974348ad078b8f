// Each contact point's body, rendered from one alert's facts, is what its receiver accepts (checked by
// the same shape checks the local receivers answer with): Slack's Block Kit limits even for a long
// summary, a PagerDuty event per action with one dedup key, an email whose HTML escapes the text.
import { checkPagerDutyEvent, checkSlackMessage } from "@sluice/testing";
import { describe, expect, it } from "vitest";
import type { TNotificationFacts } from "../alerts/notification-facts";
import { emailMessage } from "./email-message";
import { pagerDutyEvent } from "./pagerduty-event";
import { slackMessage } from "./slack-message";
import { webhookEvent } from "./webhook-event";

const facts = (over: Partial<TNotificationFacts> = {}): TNotificationFacts => ({
  kind: "fire",
  episodeId: "42",
  rule: "backlog_growing",
  severity: "critical",
  pipeline: "payments-ledger",
  version: 3,
  team: "Payments Data",
  startedAt: "2026-12-01T10:00:00.000Z",
  value: 95,
  threshold: 30,
  summary: "backlog 4,750 events (95 s of input) rising, input steady at 50/s",
  ...over,
});
const KEY = "ROUTINGKEY0123456789abcdefABCDEF";

describe("rendering one alert for each receiver", () => {
  it("Slack: within Block Kit's limits, with units and the link, even for a very long summary", () => {
    const m = slackMessage(facts({ summary: "x".repeat(5000) }), "http://console.test");
    expect(checkSlackMessage(JSON.stringify(m))).toEqual({ ok: true });
    const normal = slackMessage(facts(), "http://console.test");
    expect(normal.text).toBe(
      "[FIRING] critical Backlog growing while input is steady on payments-ledger v3: backlog 4,750 events (95 s of input) rising, input steady at 50/s — http://console.test/pipelines/payments-ledger",
    );
    expect(JSON.stringify(normal)).toContain("*Value vs threshold*\\n95 s (threshold 30 s)");
  });

  it("PagerDuty: trigger, acknowledge and resolve share the alert's dedup key and are valid events", () => {
    const events = (["fire", "acknowledge", "resolve"] as const).map((kind) =>
      pagerDutyEvent(facts({ kind, actor: "oona@sluice.local" }), "http://console.test"),
    );
    expect(events.map((e) => [e.event_action, e.dedup_key])).toEqual([
      ["trigger", "sluice-alert-42"],
      ["acknowledge", "sluice-alert-42"],
      ["resolve", "sluice-alert-42"],
    ]);
    for (const e of events)
      expect(checkPagerDutyEvent(JSON.stringify({ routing_key: KEY, ...e })).status).toBe(202);
    expect(events[0]!.payload).toMatchObject({
      severity: "critical",
      source: "payments-ledger",
      component: "v3",
    });
    // Without a routing key PagerDuty refuses it: the key is added at delivery, never part of the body.
    expect(checkPagerDutyEvent(JSON.stringify(events[0])).status).toBe(400);
  });

  it("email: a subject for the inbox, escaped HTML, and acknowledge / resolve in the fire's thread", () => {
    const fire = emailMessage(facts({ summary: "<b>bold</b> & co" }), null, "42:cp:fire");
    expect(fire.subject).toBe(
      "[FIRING] critical Backlog growing while input is steady on payments-ledger v3",
    );
    expect(fire.html).toContain("&lt;b&gt;bold&lt;/b&gt; &amp; co");
    expect(fire.html).not.toContain("<b>bold</b>");
    const ack = emailMessage(
      facts({ kind: "acknowledge", actor: "oona@sluice.local", note: "on it" }),
      null,
      "42:cp:acknowledge",
    );
    expect(ack.inReplyTo).toBe(fire.messageId);
    expect(ack.text).toContain("Acknowledged: by oona@sluice.local: “on it”");
  });

  it("webhook: Sluice's event names what happened and carries every fact", () => {
    const e = webhookEvent(
      facts({ kind: "resolve", actor: "auto", resolvedAt: "2026-12-01T10:05:00.000Z" }),
      null,
    );
    expect(e).toMatchObject({
      type: "alert.resolved",
      alert: {
        id: "42",
        rule: "backlog_growing",
        pipeline: "payments-ledger",
        version: 3,
        url: null,
        resolvedAt: "2026-12-01T10:05:00.000Z",
      },
    });
    expect(e.text).toBe(
      "[RESOLVED] critical Backlog growing while input is steady on payments-ledger v3 (its condition cleared): backlog 4,750 events (95 s of input) rising, input steady at 50/s",
    );
  });
});
