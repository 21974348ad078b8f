// `sluice rollout start|promote|abort` as a person would type them, against a real database and Kafka:
// each step's output, one running rollout per pipeline, who may (a viewer may not start one), a
// promotion refused before a clean reconciliation, and an abort that drops the candidate's table. The
// switch itself is proven in @sluice/services rollouts/rollout.int.test.ts.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Kafka, logLevel } from "kafkajs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestDatabase,
  createTestUsers,
  endPool,
  entrypointArgs,
  testServices,
  uniqueName,
  type TestDatabase,
} from "@sluice/testing";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const queueName = uniqueName("cli_rollout");
const topic = uniqueName("cli_rollout");
let database: TestDatabase;
let pool: pg.Pool;
let dir: string;
let kafka: Kafka;

function sluice(actor: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database.url,
    WORKER_QUEUE: queueName,
    SLUICE_ACTOR: actor,
  };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...entrypointArgs("cli"), ...args],
      { cwd: REPO_ROOT, env },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
}

const spec = (extra: string) =>
  `name: orders\nowner: shop\nsource: { kafka: { topic: ${topic} } }\nformat: json\ncontract: { fields: { id: string, amount: int } }\n${extra}sink: { postgres: { table: orders } }\ntrigger: { every: 5s }\n`;

beforeAll(async () => {
  database = await createTestDatabase("cli_rollout");
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  await createTestUsers(pool, [
    { email: "owner@shop.test", role: "owner", teams: ["shop"] },
    { email: "operator@ops.test", role: "operator" },
    { email: "viewer@shop.test", role: "viewer", teams: ["shop"] },
  ]);
  dir = await mkdtemp(path.join(tmpdir(), "sluice-cli-rollout-"));
  kafka = new Kafka({
    brokers: testServices.kafkaBrokers,
    clientId: "it-cli-rollout",
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
  await admin.disconnect();
});
afterAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
  if (pool) await endPool(pool);
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe("sluice rollout", () => {
  it("start, a second start refused, promote asks someone else, abort drops green's table; a viewer may not start one", async () => {
    const blue = path.join(dir, "orders.yaml");
    await writeFile(blue, spec(""));
    expect((await sluice("owner@shop.test", "start", blue, "first deploy")).code).toBe(0);
    const green = path.join(dir, "orders-big.yaml");
    await writeFile(green, spec("expectations: [{ name: big, expr: 'amount > 100', action: drop }]\n"));

    const viewer = await sluice("viewer@shop.test", "rollout", "start", green, "try");
    expect(viewer.code).toBe(5);

    const badKeep = await sluice(
      "owner@shop.test",
      "rollout",
      "start",
      green,
      "--keep-previous",
      "3 weeks",
      "x",
    );
    expect(badKeep.code).toBe(1);
    expect(badKeep.stderr).toContain(
      "--keep-previous 3 weeks: write hours or days, e.g. --keep-previous 72h or 7d",
    );

    const started = await sluice(
      "owner@shop.test",
      "rollout",
      "start",
      green,
      "--from",
      "earliest",
      "--keep-previous",
      "3d",
      "only big orders",
    );
    expect(started.stderr).toBe("");
    expect(started.code).toBe(0);
    expect(started.stdout).toContain(
      "orders: rollout #1 started: version 2 (green) runs beside version 1 (blue, serving) from 0:0,1:0",
    );
    expect(started.stdout).toContain(
      "after a promotion, version 1 keeps its state and tables for 72 hours (a rollback needs them)",
    );
    const kept = await pool.query(`SELECT keep_previous_hours AS hours FROM rollouts`);
    expect(kept.rows).toEqual([{ hours: 72 }]);
    const tables = await pool.query(
      `SELECT to_regclass('sluice_sinks."orders@v2"') IS NOT NULL AS green, to_regclass('orders') IS NOT NULL AS serving`,
    );
    expect(tables.rows[0]).toEqual({ green: true, serving: true });

    const again = await sluice("owner@shop.test", "rollout", "start", green, "again");
    expect(again.code).toBe(1);

    // Not reconciled yet: refused, saying what is missing.
    const early = await sluice("owner@shop.test", "rollout", "promote", "orders", "ready");
    expect(early.code).toBe(1);
    expect(early.stderr).toContain("no reconciliation has been run yet");
    // Reconciling on demand: nothing committed yet, so stored as waiting, and printed as such; a viewer
    // may not (it runs a comparison over both tables).
    expect((await sluice("viewer@shop.test", "rollout", "reconcile", "orders")).code).toBe(5);
    const reconciled = await sluice("operator@ops.test", "rollout", "reconcile", "orders");
    expect(reconciled.stderr).toBe("");
    expect(reconciled.code).toBe(0);
    expect(reconciled.stdout).toMatch(/^orders: reconciliation #\d+ waiting: /);
    expect(
      (
        await pool.query(
          `SELECT status FROM rollout_reconciliations WHERE requested_by = 'operator@ops.test'`,
        )
      ).rows,
    ).toEqual([{ status: "waiting" }]);
    // A clean reconciliation, as the workers' pass would store it (the comparison itself is proven in
    // @sluice/services rollouts/promotion-gate.int.test.ts).
    await pool.query(
      `INSERT INTO rollout_reconciliations (blue_version_id, green_version_id, status, only_blue, only_green, differing,
         requested_by, started_at, finished_at, duration_ms)
       SELECT blue_version_id, green_version_id, 'compared', 0, 0, 0, 'system:rollout', now(), now(), 1 FROM rollouts`,
    );
    const promote = await sluice("owner@shop.test", "rollout", "promote", "orders", "ready");
    expect(promote.code).toBe(0);
    expect(promote.stdout).toMatch(
      /orders: change request #\d+ \(promotion\) is waiting for someone else's approval/,
    );

    const rollback = await sluice("operator@ops.test", "rollout", "rollback", "orders", "nothing promoted");
    expect(rollback.code).toBe(1);
    expect(rollback.stderr).toContain(
      "is running: only a promoted rollout is rolled back (abort a running one)",
    );

    const aborted = await sluice("operator@ops.test", "rollout", "abort", "orders", "not now");
    expect(aborted.stderr).toBe("");
    expect(aborted.stdout).toContain(
      "orders: rollout #1 aborted: version 2 stopped for good, its state and table dropped (orders@v2)",
    );
    const gone = await pool.query(`SELECT to_regclass('sluice_sinks."orders@v2"') IS NULL AS gone`);
    expect(gone.rows[0]).toEqual({ gone: true });
    const request = await pool.query(`SELECT status FROM change_requests WHERE kind = 'promotion'`);
    expect(request.rows).toEqual([{ status: "cancelled" }]);
  });
});
