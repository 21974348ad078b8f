import { describe, expect, it } from "vitest";
import { ledgerSpec, settlementsSpec } from "./test-specs";
import { validateSpec } from "./validate-spec";
import type { TSpecError } from "./errors";

function errorsOf(spec: unknown): TSpecError[] {
  const result = validateSpec(spec);
  if (result.ok) throw new Error("expected the spec to be invalid");
  return result.errors;
}

const webhook = (extra: Record<string, unknown> = {}) => ({
  webhook: { url: "https://hooks.example.com/fraud", ...extra },
});

describe("postgres sink rules", () => {
  it("keys an append ledger with dedupe by the dedupe key (the event id)", () => {
    const result = validateSpec(ledgerSpec());
    expect(result.ok && result.spec.sink).toEqual({
      postgres: { table: "payments_ledger", mode: "append", key: ["event_id"] },
    });
  });

  it("leaves an append ledger without dedupe unkeyed", () => {
    const spec = ledgerSpec();
    delete spec.dedupe;
    const result = validateSpec(spec);
    expect(result.ok && result.spec.sink).toEqual({ postgres: { table: "payments_ledger", mode: "append" } });
  });

  it("requires a key for mode upsert", () => {
    const spec = ledgerSpec();
    delete spec.dedupe;
    spec.sink.postgres.mode = "upsert";
    expect(errorsOf(spec)).toEqual([
      { path: "sink.postgres.key", message: expect.stringMatching(/mode upsert needs a key: add key: \[/) },
    ]);
  });

  it("requires key columns to be non-null output columns", () => {
    const spec = ledgerSpec();
    spec.sink.postgres = {
      table: "payments_ledger",
      mode: "upsert",
      key: ["event_id", "card_country", "nope"],
    };
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({
      path: "sink.postgres.key[1]",
      message: expect.stringMatching(/card_country can be null, so it cannot be a sink key/),
    });
    expect(errors).toContainEqual({
      path: "sink.postgres.key[2]",
      message: expect.stringMatching(/"nope" is not a column of the pipeline's output/),
    });
  });

  it("requires key columns to survive select", () => {
    const spec = ledgerSpec();
    spec.transform = { select: ["amount", "currency"] };
    expect(errorsOf(spec)).toContainEqual({
      path: "sink.postgres.key[0]",
      message: expect.stringMatching(
        /"event_id" is not a column of the pipeline's output.*use one of amount, currency/,
      ),
    });
  });

  it("rejects a table name with SQL in it", () => {
    const spec = ledgerSpec();
    spec.sink.postgres.table = "payments_ledger; DROP TABLE users; --";
    expect(errorsOf(spec)).toEqual([
      {
        path: "sink.postgres.table",
        message: expect.stringMatching(/is not a valid table name \(quotes, spaces, semicolons/),
      },
    ]);
  });
});

describe("webhook sink rules", () => {
  it("fills webhook defaults and takes the idempotency key from dedupe", () => {
    const spec = ledgerSpec();
    spec.sink = webhook();
    const result = validateSpec(spec);
    expect(result.ok && result.spec.sink).toEqual({
      webhook: {
        url: "https://hooks.example.com/fraud",
        method: "POST",
        headers: {},
        headersFromEnv: {},
        idempotencyKey: ["event_id"],
        idempotencyHeader: "Idempotency-Key",
        timeout: "10s",
        maxAttempts: 10,
      },
    });
  });

  it("requires a stable idempotency key", () => {
    const spec = ledgerSpec();
    delete spec.dedupe;
    spec.sink = webhook();
    expect(errorsOf(spec)).toEqual([
      {
        path: "sink.webhook.idempotencyKey",
        message: expect.stringMatching(/needs a stable event identity/),
      },
    ]);
    spec.sink = webhook({ idempotencyKey: ["event_id"] });
    expect(validateSpec(spec).ok).toBe(true);
  });

  it("requires an aggregate feeding a webhook to use outputMode append", () => {
    const spec = settlementsSpec();
    spec.sink = webhook();
    expect(errorsOf(spec)).toContainEqual({
      path: "aggregate.outputMode",
      message: expect.stringMatching(/updated window would never be re-sent/),
    });
    spec.aggregate.outputMode = "append";
    const result = validateSpec(spec);
    expect(result.ok && result.spec.sink?.webhook?.idempotencyKey).toEqual(["merchant_id", "window_start"]);
  });

  it("rejects credentials in the url and secret-looking query parameters", () => {
    const spec = ledgerSpec();
    spec.sink = webhook({ url: "https://fraud:hunter2@hooks.example.com/x" });
    expect(errorsOf(spec)).toEqual([
      { path: "sink.webhook.url", message: expect.stringMatching(/contains credentials.*headersFromEnv/) },
    ]);
    spec.sink = webhook({ url: "https://hooks.example.com/x?api_key=abc" });
    expect(errorsOf(spec)).toEqual([
      {
        path: "sink.webhook.url",
        message: expect.stringMatching(/"api_key" looks like a secret.*urlFromEnv/),
      },
    ]);
  });

  it("rejects secret-looking static headers and points to headersFromEnv", () => {
    const spec = ledgerSpec();
    spec.sink = webhook({ headers: { Authorization: "see-the-wiki", "X-Team": "risk" } });
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({
      path: "sink.webhook.headers.Authorization",
      message: expect.stringMatching(/move it to headersFromEnv: \{ Authorization: SOME_ENV_VAR \}/),
    });
    expect(errors.map((e) => e.path)).not.toContain('sink.webhook.headers["X-Team"]');
  });

  it("accepts headersFromEnv and urlFromEnv with environment variable names", () => {
    const spec = ledgerSpec();
    spec.sink = {
      webhook: {
        urlFromEnv: "FRAUD_HOOK_URL",
        headersFromEnv: { Authorization: "FRAUD_HOOK_AUTH", "X-Api-Key": "FRAUD_KEY" },
      },
    };
    expect(validateSpec(spec).ok).toBe(true);
    spec.sink.webhook.headersFromEnv = { Authorization: "Bearer xyz" };
    expect(errorsOf(spec)).toContainEqual({
      path: "sink.webhook.headersFromEnv.Authorization",
      message: expect.stringMatching(/not an environment variable name/),
    });
  });

  it("requires exactly one of url and urlFromEnv, and an http(s) url", () => {
    const spec = ledgerSpec();
    spec.sink = { webhook: {} };
    expect(errorsOf(spec)).toContainEqual({
      path: "sink.webhook",
      message: expect.stringMatching(/exactly one of url, urlFromEnv/),
    });
    spec.sink = webhook({ url: "ftp://example.com/x" });
    expect(errorsOf(spec)).toContainEqual({
      path: "sink.webhook.url",
      message: expect.stringMatching(/not an http\(s\) URL/),
    });
  });
});

describe("secrets never go in a spec", () => {
  it("rejects secret-looking settings anywhere, with the indirection to use", () => {
    const spec = ledgerSpec();
    spec.source.kafka.password = "hunter2";
    spec.sink.postgres.apiKey = "abc";
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({
      path: "source.kafka.password",
      message: expect.stringMatching(/looks like a secret, and secrets never go in a spec/),
    });
    expect(errors).toContainEqual({
      path: "sink.postgres.apiKey",
      message: expect.stringMatching(/looks like a secret/),
    });
    expect(errors.filter((e) => e.path === "source.kafka.password")).toHaveLength(1);
  });

  it("rejects a bearer token as a header value", () => {
    const spec = ledgerSpec();
    spec.sink = webhook({ headers: { "X-Forward": "Bearer abcdefghijklmnopqrstuvwxyz" } });
    expect(errorsOf(spec)).toEqual([
      {
        path: 'sink.webhook.headers["X-Forward"]',
        message: expect.stringMatching(/looks like a credential/),
      },
    ]);
  });

  it("rejects credentials in any URL-like value and bearer tokens", () => {
    const spec = ledgerSpec();
    spec.description = "copy of postgres://admin:s3cret@db.internal/prod";
    spec.expectations[0].name = "Bearer abcdefghijklmnopqrstuvwxyz0123";
    const paths = errorsOf(spec).map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(["description", "expectations[0].name"]));
  });

  it("does not mistake contract fields named like secrets for secrets", () => {
    const spec = ledgerSpec();
    spec.contract.fields.token_id = "string?";
    spec.contract.fields.password_reset = "boolean?";
    spec.description = "Basic ledger of payment events";
    expect(validateSpec(spec).ok).toBe(true);
  });
});
