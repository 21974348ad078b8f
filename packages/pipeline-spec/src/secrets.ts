// Secrets come from the environment, never from specs: specs are stored, diffed, shown in the console
// and copied between environments. These checks catch the obvious mistakes (credentials in a URL, a
// password field, an Authorization header) and point at the indirection that replaces them.
import { issue, type TPathSegment, type TSpecIssue } from "./errors";

const SECRET_WORDS = new Set(
  "pass password passwd pwd secret secrets token tokens credential credentials auth authorization bearer cookie sig signature apikey".split(
    " ",
  ),
);
const SECRET_PAIRS = new Set(["api key", "access key", "private key", "secret key", "client secret"]);
const CREDENTIALS_IN_URL = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]+@/i;
const PASSWORD_IN_ANY_URL = /\b[a-z][a-z0-9+.-]*:\/\/[^/@\s:]+:[^/@\s]+@/i;
const SECRET_VALUE = /^(bearer|basic)\s+[A-Za-z0-9._~+/=-]{16,}$/i;

/** Is this header, query-parameter or setting name one that usually holds a secret? (apiKey, X-Auth-Token, password) */
export function looksLikeSecretName(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return words.some((w, i) => SECRET_WORDS.has(w) || SECRET_PAIRS.has(`${words[i - 1]} ${w}`));
}

/** Why this URL must not be in a spec, or undefined. */
export function urlSecretProblem(url: string): string | undefined {
  if (CREDENTIALS_IN_URL.test(url)) {
    return "the url contains credentials (user:password@): remove them and send them as a header from the environment, e.g. headersFromEnv: { Authorization: FRAUD_HOOK_AUTH }, or use urlFromEnv";
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  for (const name of parsed.searchParams.keys()) {
    if (looksLikeSecretName(name)) {
      return `the url's query parameter ${JSON.stringify(name)} looks like a secret: keep the url secret-free and use urlFromEnv (the variable holds the full url) or headersFromEnv`;
    }
  }
  return undefined;
}

/**
 * Walks the raw spec. Keys under these paths are user-chosen names (contract fields, measures, env
 * header mappings), not settings, so a field called `token_id` is not mistaken for a secret.
 */
const NAME_MAPS: readonly string[][] = [
  ["contract", "fields"],
  ["aggregate", "measures"],
  ["sink", "webhook", "headersFromEnv"],
  ["sink", "webhook", "headers"],
];
const SETTINGS_THAT_NAME_KEYS = new Set(["idempotencyKey", "idempotencyHeader", "key"]);

export function findSecretsInSpec(value: unknown, path: TPathSegment[] = []): TSpecIssue[] {
  if (typeof value === "string") {
    if (PASSWORD_IN_ANY_URL.test(value) && !isWebhookUrl(path)) {
      return [
        issue(
          path,
          "this value contains credentials (user:password@ in a URL): secrets come from the environment, never from specs",
        ),
      ];
    }
    if (SECRET_VALUE.test(value.trim())) {
      return [
        issue(
          path,
          "this value looks like a credential (Bearer/Basic ...): put it in an environment variable and reference it, e.g. headersFromEnv: { Authorization: FRAUD_HOOK_AUTH }",
        ),
      ];
    }
    return [];
  }
  if (Array.isArray(value)) return value.flatMap((item, i) => findSecretsInSpec(item, [...path, i]));
  if (typeof value !== "object" || value === null) return [];
  const isNameMap = NAME_MAPS.some((p) => p.length === path.length && p.every((s, i) => s === path[i]));
  const found: TSpecIssue[] = [];
  for (const [key, child] of Object.entries(value)) {
    if (!isNameMap && !SETTINGS_THAT_NAME_KEYS.has(key) && looksLikeSecretName(key)) {
      found.push(
        issue(
          [...path, key],
          `${JSON.stringify(key)} looks like a secret, and secrets never go in a spec: read it from the environment instead (webhook headers: headersFromEnv: { Authorization: MY_ENV_VAR })`,
        ),
      );
      continue;
    }
    found.push(...findSecretsInSpec(child, [...path, key]));
  }
  return found;
}

function isWebhookUrl(path: TPathSegment[]): boolean {
  // The webhook url gets its own, more specific message from the sink schema.
  return path.length === 3 && path[0] === "sink" && path[1] === "webhook" && path[2] === "url";
}
