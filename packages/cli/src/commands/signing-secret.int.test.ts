// `sluice signing-secret`: a pipeline's owners get its webhook secret (which verifies what the workers
// sign, and only that pipeline's requests); another team's owner and a viewer are refused (exit 5), a
// team's notification secret is for admins, and every showing is audited.
import pg from "pg";
import { signatureHeaders, signingSecretFor } from "@sluice/outbound-http";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerPipelineVersion } from "@sluice/engine";
import { ledgerSpec, runSluice } from "@sluice/engine/testing";
import { createTestDatabase, createTestUsers, endPool, type TestDatabase } from "@sluice/testing";

let database: TestDatabase;
let pool: pg.Pool;

/** `sluice <args> --as <as>`, with no SLUICE_ACTOR: --as alone says who acts. */
const sluice = (as: string, ...args: string[]) =>
  runSluice([...args, "--as", as], { databaseUrl: database.url, actor: null });

beforeAll(async () => {
  database = await createTestDatabase("cli_signing_secret");
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  const spec = ledgerSpec("alerts", {
    name: "fraud-hook",
    owner: "risk",
    sink: { webhook: { url: "https://hooks.example.com/fraud", idempotencyKey: ["event_id"] } },
  });
  await registerPipelineVersion(pool, spec);
  await createTestUsers(pool, [
    { email: "risk-owner@ops.test", role: "owner", teams: ["risk"] },
    { email: "payments-owner@ops.test", role: "owner", teams: ["payments"] },
    { email: "viewer@ops.test", role: "viewer" },
    { email: "admin@ops.test", role: "admin" },
  ]);
});
afterAll(async () => {
  await endPool(pool);
  await database?.drop();
});

describe("sluice signing-secret", () => {
  it("the pipeline's owner gets the secret that verifies the pipeline's signed requests, and no other pipeline's", async () => {
    const r = await sluice("risk-owner@ops.test", "signing-secret", "fraud-hook");
    expect(r.code).toBe(0);
    const secret = r.stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const key = process.env.SLUICE_SIGNING_KEY!;
    const body = JSON.stringify({ event_id: "e1" });
    const signed = signatureHeaders(
      signingSecretFor(key, { kind: "pipeline", name: "fraud-hook" }),
      "fraud-hook:e1",
      body,
    );
    expect(new Webhook(secret).verify(body, signed)).toEqual({ event_id: "e1" });
    const other = signatureHeaders(
      signingSecretFor(key, { kind: "pipeline", name: "other" }),
      "other:e1",
      body,
    );
    expect(() => new Webhook(secret).verify(body, other)).toThrow();
    const audit = await pool.query(
      `SELECT actor, action, target_label FROM audit_events WHERE action = 'signing_secret.show'`,
    );
    expect(audit.rows).toEqual([
      {
        actor: "risk-owner@ops.test",
        action: "signing_secret.show",
        target_label: "pipeline fraud-hook's webhook",
      },
    ]);
  });

  it("another team's owner and a viewer are refused (exit 5) and see no secret", async () => {
    for (const as of ["payments-owner@ops.test", "viewer@ops.test"]) {
      const r = await sluice(as, "signing-secret", "fraud-hook");
      expect(r.code).toBe(5);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain("not allowed");
    }
  });

  it("a team's notification secret is for admins only", async () => {
    expect((await sluice("risk-owner@ops.test", "signing-secret", "--team", "risk")).code).toBe(5);
    const r = await sluice("admin@ops.test", "signing-secret", "--team", "risk");
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(
      signingSecretFor(process.env.SLUICE_SIGNING_KEY!, { kind: "team", slug: "risk" }),
    );
  });
});
