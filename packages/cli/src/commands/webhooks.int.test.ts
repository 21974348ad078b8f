// Guarantee proven: `sluice webhooks` shows an operator a pipeline's failed webhook deliveries, and
// `sluice webhooks retry` re-queues exactly the failed ones asked for (one key or all) with their keys,
// records who and why, refuses a delivered key (exit 1, saying it is never sent again) and exits 1 on an
// unknown pipeline or a missing --key value. (The sending after a re-queue is proven with a real worker
// and receiver in workers/src/batches/webhook-retry.int.test.ts.)
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerPipelineVersion } from "@sluice/engine";
import { ledgerSpec, runSluice } from "@sluice/engine/testing";
import { createTestDatabase, createTestUsers, endPool, type TestDatabase } from "@sluice/testing";

let database: TestDatabase;
let pool: pg.Pool;

const sluice = (...args: string[]) =>
  runSluice(args, { databaseUrl: database.url, actor: "oncall@ops.test" });

const status = async (key: string) =>
  (
    await pool.query<{ status: string; attempts: number }>(
      `SELECT status, attempts FROM webhook_deliveries WHERE idempotency_key = $1`,
      [key],
    )
  ).rows[0];

beforeAll(async () => {
  database = await createTestDatabase("cli_webhooks");
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  const spec = ledgerSpec("alerts", {
    name: "alerts",
    sink: { webhook: { url: "http://127.0.0.1:9/hooks", idempotencyKey: ["event_id"] } },
  });
  const { pipelineVersionId } = await registerPipelineVersion(pool, spec);
  await createTestUsers(pool, [{ email: "oncall@ops.test", role: "operator" }]);
  // The ledger as the engine leaves it after a receiver outage: one key delivered, two given up.
  await pool.query(
    `INSERT INTO webhook_deliveries (pipeline_id, idempotency_key, status, attempts, last_status_code, last_error, payload, pipeline_version_id, batch_id, delivered_at)
     SELECT v.pipeline_id, d.key, d.status, d.attempts, d.code, d.error, jsonb_build_object('event_id', d.key), v.id, 0, CASE WHEN d.status = 'delivered' THEN now() END
       FROM pipeline_versions v,
            (VALUES ('alerts:e1', 'delivered', 1, 200, NULL), ('alerts:e2', 'failed', 10, 500, 'HTTP 500: down (attempt 10 of 10)'),
                    ('alerts:e3', 'failed', 10, 503, 'HTTP 503: down (attempt 10 of 10)')) AS d (key, status, attempts, code, error)
      WHERE v.id = $1`,
    [pipelineVersionId],
  );
});
afterAll(async () => {
  if (pool) await endPool(pool);
  await database?.drop();
});

describe("sluice webhooks", () => {
  it("lists the failed deliveries with their errors and how to retry them", async () => {
    const listed = await sluice("webhooks", "alerts", "--failed");
    expect(listed).toMatchObject({ code: 0, stderr: "" });
    expect(listed.stdout).toContain(
      "alerts: webhook deliveries (table webhook_deliveries): delivered 1, pending 0, failed 2",
    );
    expect(listed.stdout).toMatch(/failed {4}alerts:e2 {2}10 attempt\(s\).*HTTP 500: down/);
    expect(listed.stdout).toMatch(/failed {4}alerts:e3 {2}10 attempt\(s\).*HTTP 503: down/);
    expect(listed.stdout).not.toContain("alerts:e1");
    expect(listed.stdout).toContain("npx sluice webhooks retry alerts");
    expect((await sluice("webhooks", "alerts")).stdout).toContain("delivered alerts:e1");
    expect(await sluice("webhooks", "nope")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no pipeline named "nope"'),
    });
  });

  it("retry re-queues one key or every failed one, recorded with who and why; a delivered key is refused", async () => {
    expect(await sluice("webhooks", "retry", "alerts", "--key", "alerts:e1")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('"alerts:e1" was delivered at'),
    });
    expect(await status("alerts:e1")).toEqual({ status: "delivered", attempts: 1 });
    expect(await sluice("webhooks", "retry", "alerts", "--key")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("--key needs a value"),
    });
    expect(await sluice("webhooks", "retry")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("which pipeline?"),
    });

    const one = await sluice("webhooks", "retry", "alerts", "--key", "alerts:e2", "receiver", "fixed");
    expect(one).toMatchObject({ code: 0 });
    expect(one.stdout).toContain("alerts: re-queued 1 failed webhook deliveries with their idempotency keys");
    expect(one.stdout).toContain("alerts is not running on the workers: they are sent once it runs");
    expect(await status("alerts:e2")).toEqual({ status: "pending", attempts: 0 });
    expect(await status("alerts:e3")).toEqual({ status: "failed", attempts: 10 });
    // Already re-queued: not failed any more.
    expect(await sluice("webhooks", "retry", "alerts", "--key=alerts:e2")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('"alerts:e2" is pending, not failed'),
    });

    expect((await sluice("webhooks", "retry", "alerts")).stdout).toContain("re-queued 1 failed");
    expect(await status("alerts:e3")).toEqual({ status: "pending", attempts: 0 });
    expect((await sluice("webhooks", "retry", "alerts")).stdout).toContain(
      "no failed webhook deliveries: nothing to retry",
    );

    const audit = await pool.query(
      `SELECT idempotency_key, deliveries, actor, reason FROM webhook_requeues ORDER BY id`,
    );
    expect(audit.rows.map((r) => [r.idempotency_key, r.deliveries, r.reason])).toEqual([
      ["alerts:e2", 1, "receiver fixed"],
      [null, 1, ""],
    ]);
    expect(audit.rows.map((r) => r.actor)).toEqual(["cli:oncall@ops.test", "cli:oncall@ops.test"]);
  });
});
