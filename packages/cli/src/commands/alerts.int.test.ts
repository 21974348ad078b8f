// Guarantee proven: `sluice alerts` lists a pipeline's open alerts as the console does; `ack` and
// `silence` change them as the acting user, audited, and refuse a viewer (exit 5) and a silence
// without an expiry (exit 1, naming --for).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerPipelineVersion } from "@sluice/engine";
import { ledgerSpec, runSluice } from "@sluice/engine/testing";
import { createTestDatabase, createTestUsers, endPool, type TestDatabase } from "@sluice/testing";

let database: TestDatabase;
let pool: pg.Pool;
let episodeId: string;

const sluice = (...args: string[]) =>
  runSluice(args, { databaseUrl: database.url, actor: "oncall@ops.test" });

beforeAll(async () => {
  database = await createTestDatabase("cli_alerts");
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  const { pipelineVersionId } = await registerPipelineVersion(
    pool,
    ledgerSpec("payments", { name: "ledger-alerts" }),
  );
  await createTestUsers(pool, [
    { email: "oncall@ops.test", role: "operator" },
    { email: "watcher@ops.test", role: "viewer" },
  ]);
  const p = await pool.query<{ pipeline_id: string }>(
    `SELECT pipeline_id FROM pipeline_versions WHERE id = $1`,
    [pipelineVersionId],
  );
  const pipelineId = p.rows[0]!.pipeline_id;
  await pool.query(
    `INSERT INTO alert_rules (id, pipeline_id, kind, severity, threshold, for_seconds, clear_for_seconds) VALUES ('r1', $1, 'freshness', 'critical', 300, 60, 120)`,
    [pipelineId],
  );
  const ep = await pool.query<{ id: string }>(
    `INSERT INTO alert_episodes (rule_id, pipeline_id, pipeline_version, state, severity, started_at, value, threshold, summary) VALUES ('r1', $1, 1, 'firing', 'critical', now() - interval '5 minutes', 412, 300, 'newest committed row arrived 412 s ago') RETURNING id`,
    [pipelineId],
  );
  episodeId = ep.rows[0]!.id;
});
afterAll(async () => {
  if (pool) await endPool(pool);
  await database?.drop();
});

describe("sluice alerts", () => {
  it("lists open alerts with value, threshold and state", async () => {
    const r = await sluice("alerts", "list");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`#${episodeId}`);
    expect(r.stdout).toMatch(
      /firing\s+critical\s+freshness on ledger-alerts v1 since .*: newest committed row arrived 412 s ago \[value 412 s vs 300 s\]/,
    );
  });

  it("a viewer may not acknowledge (exit 5); an operator acknowledges, audited", async () => {
    const refused = await sluice("alerts", "ack", episodeId, "--as", "watcher@ops.test");
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain("not allowed: watcher@ops.test (viewer)");
    const ok = await sluice("alerts", "ack", episodeId, "looking", "into", "it");
    expect(ok.code).toBe(0);
    const row = await pool.query(
      `SELECT state, acknowledged_by, ack_note FROM alert_episodes WHERE id = $1`,
      [episodeId],
    );
    expect(row.rows[0]).toEqual({
      state: "acknowledged",
      acknowledged_by: "oncall@ops.test",
      ack_note: "looking into it",
    });
    const audit = await pool.query(
      `SELECT origin FROM audit_events WHERE action = 'alert.acknowledge' AND target_id = $1`,
      [episodeId],
    );
    expect(audit.rows).toEqual([{ origin: "cli" }]);
  });

  it("a silence needs --for; with it, the pipeline is silenced until then", async () => {
    const missing = await sluice("alerts", "silence", "ledger-alerts", "maintenance");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("--for: a silence needs an expiry");
    const ok = await sluice("alerts", "silence", "ledger-alerts", "--for", "2h", "source", "maintenance");
    expect(ok.code).toBe(0);
    const s = await pool.query<{ reason: string; hours: number }>(
      `SELECT reason, round(extract(epoch FROM expires_at - created_at) / 3600) AS hours FROM alert_silences`,
    );
    expect(s.rows.map((x) => ({ reason: x.reason, hours: Number(x.hours) }))).toEqual([
      { reason: "source maintenance", hours: 2 },
    ]);
    const listed = await sluice("alerts", "list");
    expect(listed.stdout).toContain("silenced; acked by oncall@ops.test");
  });
});
