// The kinds of contact point and what each needs, validated once for the Admin page, the seed and the
// services: a webhook or Slack URL and a PagerDuty routing key are secrets (from an environment
// variable's name, or stored and never returned); PagerDuty may name another Events API address (EU
// accounts, a local receiver); email lists its recipients and uses the workers' SMTP server.
import { z } from "zod";

export const CONTACT_POINT_KINDS = ["slack", "pagerduty", "email", "webhook"] as const;
export type TContactPointKind = (typeof CONTACT_POINT_KINDS)[number];

export const CONTACT_POINT_KIND_INFO: Record<TContactPointKind, { label: string; secret: string | null }> = {
  slack: { label: "Slack (incoming webhook)", secret: "webhook URL" },
  pagerduty: { label: "PagerDuty (Events API v2)", secret: "routing key" },
  email: { label: "Email (SMTP)", secret: null },
  webhook: { label: "Webhook (Sluice's JSON event)", secret: "URL" },
};

const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;

/** keep: leave the stored secret as it is (updates only); env: a variable's name; value: stored as a secret. */
export const ZContactPointSecret = z.discriminatedUnion("from", [
  z.object({ from: z.literal("keep") }),
  z.object({
    from: z.literal("env"),
    name: z.string().regex(ENV_NAME, "An environment variable's name, e.g. PAYMENTS_SLACK_WEBHOOK_URL"),
  }),
  z.object({ from: z.literal("value"), value: z.string().trim().min(1, "Enter the secret").max(2000) }),
]);
export type TContactPointSecret = z.infer<typeof ZContactPointSecret>;

const httpUrl = (what: string) =>
  z
    .url({ protocol: /^https?$/, error: `${what} starts with https:// (or http:// on a private network)` })
    .max(2000);

export const ZContactPointFields = z
  .object({
    name: z.string().trim().min(1, "Name the contact point, e.g. #payments-oncall").max(100),
    kind: z.enum(CONTACT_POINT_KINDS, { error: `kind: one of ${CONTACT_POINT_KINDS.join(", ")}` }),
    secret: ZContactPointSecret.default({ from: "keep" }),
    endpoint: z.union([httpUrl("The Events API address"), z.literal("")]).default(""),
    addresses: z
      .array(z.email("A recipient is an email address, e.g. payments-oncall@example.com").max(320))
      .max(20, "At most 20 recipients")
      .default([]),
    enabled: z.boolean().default(true),
  })
  .superRefine((cp, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (cp.kind === "email") {
      if (cp.addresses.length === 0)
        issue("addresses", "An email contact point needs at least one recipient");
      if (cp.secret.from !== "keep")
        issue("secret", "An email contact point has no secret (SMTP comes from SLUICE_SMTP_URL)");
      return;
    }
    if (cp.addresses.length > 0) issue("addresses", `A ${cp.kind} contact point has no recipients`);
    if (cp.kind !== "pagerduty" && cp.endpoint)
      issue("endpoint", "Only PagerDuty takes an Events API address");
    if (cp.secret.from !== "value") return;
    if (cp.kind === "pagerduty") {
      if (!/^[A-Za-z0-9]{32}$/.test(cp.secret.value))
        issue(
          "secret",
          "A PagerDuty routing key is the 32-character Integration Key of an Events API v2 integration",
        );
    } else if (!httpUrl("A URL").safeParse(cp.secret.value).success) {
      issue(
        "secret",
        `The ${CONTACT_POINT_KIND_INFO[cp.kind].secret} starts with https:// (or http:// on a private network)`,
      );
    }
  });
export type TContactPointFields = z.input<typeof ZContactPointFields>;

/** What the console may show of a contact point's secret: never its value. */
export function describeSecret(cp: {
  kind: string;
  secretEnv: string | null;
  secretValue: string | null;
}): string | null {
  if (cp.kind === "email") return null;
  const what = CONTACT_POINT_KIND_INFO[cp.kind as TContactPointKind]?.secret ?? "secret";
  if (cp.secretEnv) return `${what} from $${cp.secretEnv}`;
  if (!cp.secretValue) return `no ${what}`;
  if (cp.kind === "pagerduty") return `${what} stored (never shown)`;
  try {
    return `${what} stored (host ${new URL(cp.secretValue).host}; never shown)`;
  } catch {
    return `${what} stored (never shown)`;
  }
}
