// One page the on-call receiver got, as the receiver records it and its HTML page lists it: its own
// file so that the receiver and the page renderer (render-pages-html.ts) need not import each other.
export type TChannel = "slack" | "pagerduty" | "webhook" | "email";

export interface TReceivedPage {
  n: number;
  at: string;
  channel: TChannel;
  /** The Slack channel, the PagerDuty routing key's first 6 characters, the webhook's name, the recipients. */
  to: string;
  /** trigger / acknowledge / resolve, the webhook event's type, or an email's subject's tag. */
  action: string;
  /** PagerDuty's dedup_key, the webhook's X-Sluice-Notification, an email's Message-ID. */
  key: string;
  summary: string;
  /** The request body (JSON) or the parsed email (subject, text, headers). */
  body: unknown;
}
