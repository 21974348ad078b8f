// Standard Webhooks signatures (https://www.standardwebhooks.com, the `standardwebhooks` package):
// every request carries webhook-id (the same on every retry of one message), webhook-timestamp and
// webhook-signature = v1,<base64 HMAC-SHA256 of "id.timestamp.body">. Each sender has its own secret,
// derived from the deployment's SLUICE_SIGNING_KEY (never stored, never in a spec): a pipeline's
// webhook sink and a team's alert notifications sign with different keys, and knowing one of them
// tells nothing about another or about SLUICE_SIGNING_KEY. Receivers get theirs from
// `sluice signing-secret` (docs/security.md shows how to verify).
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";

export type TSender = { kind: "pipeline"; name: string } | { kind: "team"; slug: string };

export const MIN_SIGNING_KEY_LENGTH = 32;

/** Why `key` cannot sign, or undefined when it can. */
export function signingKeyProblem(key: string | undefined): string | undefined {
  if (!key)
    return "requests are signed (Standard Webhooks) with a key derived from SLUICE_SIGNING_KEY, which is not set here: set it (at least 32 characters, the same on the workers, the console and the CLI; try `openssl rand -base64 48`) and restart";
  if (key.length < MIN_SIGNING_KEY_LENGTH)
    return `SLUICE_SIGNING_KEY must be at least ${MIN_SIGNING_KEY_LENGTH} characters (try \`openssl rand -base64 48\`)`;
  return undefined;
}

/** The sender's secret in the Standard Webhooks form (`whsec_` + base64 of 32 bytes). */
export function signingSecretFor(signingKey: string, sender: TSender): string {
  const label = sender.kind === "pipeline" ? `pipeline:${sender.name}` : `team:${sender.slug}`;
  const bytes = createHmac("sha256", signingKey).update(`sluice-webhook-signing:${label}`).digest();
  return `whsec_${bytes.toString("base64")}`;
}

/** The three headers for one attempt of message `id` (the timestamp is the attempt's). */
export function signatureHeaders(
  secret: string,
  id: string,
  body: string,
  at: Date = new Date(),
): Record<string, string> {
  const seconds = Math.floor(at.getTime() / 1000);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(seconds),
    "webhook-signature": new Webhook(secret).sign(id, new Date(seconds * 1000), body),
  };
}
