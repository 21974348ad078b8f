// One notification to one contact point, in that receiver's own format: Sluice's webhook event, a
// Slack message, a PagerDuty Events API v2 event (routing key added here, never stored with the
// notification) or an email. The answer says whether it arrived, and when not whether retrying can
// help: a receiver that refuses the request itself (Slack's invalid_payload or no_service, PagerDuty's
// 400, an SMTP 5xx, a missing secret) will refuse it every time, so it fails at once, saying why.
// HTTP goes through @sluice/outbound-http like webhook sinks: the address each connection really uses
// is checked (loopback, private, link-local/metadata refused unless SLUICE_OUTBOUND_ALLOW lists it —
// nothing is sent, and the notification says why), and every request is signed (Standard Webhooks)
// with the contact point's team's secret, webhook-id = the notification's dedup key.
import { outboundFromEnv, type TOutboundAnswer } from "@sluice/outbound-http";
import type { TNotificationFacts } from "../alerts/notification-facts";
import { emailMessage } from "./email-message";
import { PAGERDUTY_EVENTS_URL, pagerDutyEvent } from "./pagerduty-event";
import { sendEmail, type TSmtpOptions } from "./send-email";
import { slackMessage } from "./slack-message";
import { webhookEvent } from "./webhook-event";
import type { TContactPointKind } from "./contact-point-kinds";

const TIMEOUT_MS = 5_000;

export interface TContactPointTarget {
  kind: TContactPointKind;
  name: string;
  /** The team whose contact point it is: its secret signs the request. */
  teamSlug: string;
  secretEnv: string | null;
  secretValue: string | null;
  endpoint: string | null;
  addresses: string[];
}

export interface TSendOptions {
  /**
   * Looks up a contact point's `secretEnv`, and the outbound settings SLUICE_OUTBOUND_ALLOW and
   * SLUICE_SIGNING_KEY (this process's environment).
   */
  env: (name: string) => string | undefined;
  /** SLUICE_PUBLIC_URL: the link to the console in every notification (none when null). */
  publicUrl: string | null;
  /** SLUICE_SMTP_URL / SLUICE_SMTP_FROM; null: email contact points cannot be delivered. */
  smtp: TSmtpOptions | null;
}

export type TSendResult =
  | { ok: true; status: number | null }
  | {
      ok: false;
      status: number | null;
      /** What went wrong, without the receiver's answer. */
      error: string;
      /** The start of the receiver's answer, if it sent one (shown only to who may see it). */
      response?: string | null;
      permanent: boolean;
      /** Sluice did not send it (an address it may not reach, no signing key): nothing left the process. */
      refused?: boolean;
      retryAfterMs: number | null;
    };

export async function sendToContactPoint(
  cp: TContactPointTarget,
  facts: TNotificationFacts,
  dedupKey: string,
  opts: TSendOptions,
): Promise<TSendResult> {
  if (cp.kind === "email") {
    if (!opts.smtp)
      return refuse(
        "email needs an SMTP server: set SLUICE_SMTP_URL (and SLUICE_SMTP_FROM) on the workers and the console",
      );
    if (cp.addresses.length === 0) return refuse(`${cp.name} has no recipient address`);
    const sent = await sendEmail(opts.smtp, cp.addresses, emailMessage(facts, opts.publicUrl, dedupKey));
    return sent.ok
      ? { ok: true, status: null }
      : {
          ok: false,
          status: sent.responseCode,
          error: sent.error,
          permanent: sent.permanent,
          retryAfterMs: null,
        };
  }
  const secret = cp.secretValue ?? (cp.secretEnv ? opts.env(cp.secretEnv) : undefined);
  if (!secret)
    return refuse(
      cp.secretEnv
        ? `${cp.name} reads its ${cp.kind === "pagerduty" ? "routing key" : "URL"} from the environment variable ${cp.secretEnv}, which is not set here: set it on the workers and the console, and restart them`
        : `${cp.name} has no ${cp.kind === "pagerduty" ? "routing key" : "URL"}`,
    );
  let outbound;
  try {
    outbound = outboundFromEnv(opts.env);
  } catch (err) {
    return refuse(`not sent: ${(err as Error).message}`);
  }
  const post = (url: string, body: unknown, extra: Record<string, string> = {}) =>
    outbound.send({
      url,
      body: JSON.stringify(body),
      // Every request names its notification, so a receiver (or a proxy's log) can tell a repeat.
      headers: { "x-sluice-notification": dedupKey, ...extra },
      timeoutMs: TIMEOUT_MS,
      sign: { sender: { kind: "team", slug: cp.teamSlug }, messageId: dedupKey },
    });
  if (cp.kind === "pagerduty") {
    const event = { routing_key: secret, ...pagerDutyEvent(facts, opts.publicUrl) };
    return classify(await post(cp.endpoint ?? PAGERDUTY_EVENTS_URL, event), "pagerduty");
  }
  if (cp.kind === "slack") return classify(await post(secret, slackMessage(facts, opts.publicUrl)), "slack");
  return classify(
    await post(secret, webhookEvent(facts, opts.publicUrl), { "idempotency-key": dedupKey }),
    "webhook",
  );
}

/** Sluice itself does not send it (missing settings, an address it may not reach): never retried. */
const refuse = (error: string): TSendResult => ({
  ok: false,
  status: null,
  error,
  permanent: true,
  refused: true,
  retryAfterMs: null,
});

/**
 * 429, 408 and 5xx (and no answer) are worth retrying; any other 4xx is the request itself refused, and
 * a request Sluice refused to send (its address, no signing key) is refused every time too.
 */
function classify(a: TOutboundAnswer, kind: "webhook" | "slack" | "pagerduty"): TSendResult {
  if (a.ok) return { ok: true, status: a.status };
  if (a.refused) return refuse(a.error);
  const retriable = a.retriable;
  const hint =
    retriable || kind === "webhook"
      ? ""
      : kind === "slack"
        ? " (Slack refused the message: check the webhook URL is still installed and its channel exists)"
        : " (PagerDuty refused the event: check the routing key is an Events API v2 integration key)";
  return {
    ok: false,
    status: a.status,
    error: `${a.error}${hint}`,
    response: a.body || null,
    permanent: !retriable,
    retryAfterMs: a.retryAfterMs,
  };
}
