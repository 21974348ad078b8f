// Sinks: a Postgres table (append ledger or upsert by key) or an HTTP webhook (an external side effect,
// sent once per stable idempotency key). Exactly one per pipeline.
import { z } from "zod";
import { looksLikeSecretName, urlSecretProblem } from "./secrets";
import { ZColumnList, ZEnvVarName, ZPositiveDuration, ZTableName, exactlyOneOf } from "./spec-primitives";

export const SINK_MODES = ["append", "upsert"] as const;
export type TSinkMode = (typeof SINK_MODES)[number];

export const ZPostgresSink = z.strictObject({
  table: ZTableName,
  /** Left out: upsert when the result is updated in place (aggregate update/complete, cdc), else append. */
  mode: z.enum(SINK_MODES).optional(),
  /** Primary key of the sink table. Left out on an append ledger with dedupe: the dedupe key (the event id). */
  key: ZColumnList.optional(),
});

const HEADER_NAME = /^[A-Za-z0-9-]{1,64}$/;
const ZHeaderName = z.string().refine((h) => HEADER_NAME.test(h), {
  error: (iss) => `${JSON.stringify(iss.input)} is not a header name: use letters, digits and -`,
});

const ZWebhookUrl = z.string().superRefine((url, ctx) => {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    ctx.addIssue({
      code: "custom",
      message: `${JSON.stringify(url)} is not an http(s) URL, e.g. https://hooks.example.com/fraud`,
    });
    return;
  }
  const problem = urlSecretProblem(url);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

export const ZWebhookSink = z
  .strictObject({
    url: ZWebhookUrl.optional(),
    /** An environment variable holding the whole URL, for endpoints whose URL is itself a secret. */
    urlFromEnv: ZEnvVarName.optional(),
    method: z.enum(["POST", "PUT"]).default("POST"),
    /** Static, non-secret headers. */
    headers: z.record(ZHeaderName, z.string()).default({}),
    /** Header name → environment variable that holds its value (e.g. Authorization: FRAUD_HOOK_AUTH). */
    headersFromEnv: z.record(ZHeaderName, ZEnvVarName).default({}),
    /** Columns whose values identify an event across versions and retries; defaults to the dedupe or result key. */
    idempotencyKey: ZColumnList.optional(),
    idempotencyHeader: ZHeaderName.default("Idempotency-Key"),
    timeout: ZPositiveDuration.default("10s"),
    maxAttempts: z.number().int().min(1).max(100).default(10),
  })
  .superRefine(exactlyOneOf(["url", "urlFromEnv"], "url: https://hooks.example.com/fraud"))
  .superRefine((hook, ctx) => {
    for (const name of Object.keys(hook.headers ?? {})) {
      if (looksLikeSecretName(name)) {
        ctx.addIssue({
          code: "custom",
          path: ["headers", name],
          message: `the ${name} header usually carries a secret: move it to headersFromEnv: { ${name}: SOME_ENV_VAR }`,
        });
      }
    }
  });

export type TPostgresSink = z.output<typeof ZPostgresSink>;
export type TWebhookSink = z.output<typeof ZWebhookSink>;

export type TSinkSection =
  { postgres: TPostgresSink; webhook?: undefined } | { webhook: TWebhookSink; postgres?: undefined };

export const ZSink = z
  .strictObject({ postgres: ZPostgresSink.optional(), webhook: ZWebhookSink.optional() })
  .superRefine(exactlyOneOf(["postgres", "webhook"], "{ postgres: { table: payments_ledger } }"))
  .transform((s) => s as TSinkSection);

/** After defaults that depend on the rest of the spec (see resolve-sink.ts). */
export type TResolvedPostgresSink = Omit<TPostgresSink, "mode"> & { mode: TSinkMode };
export type TResolvedWebhookSink = Omit<TWebhookSink, "idempotencyKey"> & { idempotencyKey: string[] };
export type TResolvedSink =
  | { postgres: TResolvedPostgresSink; webhook?: undefined }
  | { webhook: TResolvedWebhookSink; postgres?: undefined };
