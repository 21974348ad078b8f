// The lifecycle commands as an operator types them: `sluice start <spec>` registers and starts the
// version (queueing its first batch for the workers), pause/resume/stop change the run state and are
// recorded with who and why, and a command that does not apply exits 1 saying what to do instead.
// Each command acts as a named user (SLUICE_ACTOR / --as): one without a user, an unknown or
// disabled one, a viewer or an owner of another team exits 5 saying why, and nothing changes.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestDatabase,
  createTestUsers,
  endPool,
  testServices,
  uniqueName,
  type TestDatabase,
} from "@sluice/testing";
import { runSluice } from "@sluice/engine/testing";

const queueName = uniqueName("cli_lifecycle");
let database: TestDatabase;
let pool: pg.Pool;
let dir: string;

/** `sluice <args>` as `actor` (SLUICE_ACTOR; undefined: not set) on this file's queue. */
const sluiceAs = (actor: string | undefined, ...args: string[]) =>
  runSluice(args, { databaseUrl: database.url, actor: actor ?? null, extra: { WORKER_QUEUE: queueName } });

/** The shop team's owner runs the commands unless a test says otherwise. */
const sluice = (...args: string[]) => sluiceAs("owner@shop.test", ...args);

beforeAll(async () => {
  database = await createTestDatabase("cli_lifecycle");
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  await createTestUsers(pool, [
    { email: "owner@shop.test", role: "owner", teams: ["shop"] },
    { email: "owner@elsewhere.test", role: "owner", teams: ["elsewhere"] },
    { email: "operator@ops.test", role: "operator" },
    { email: "viewer@shop.test", role: "viewer", teams: ["shop"] },
    { email: "gone@shop.test", role: "owner", teams: ["shop"], disabled: true },
  ]);
  dir = await mkdtemp(path.join(tmpdir(), "sluice-cli-"));
});
afterAll(async () => {
  const connection = new Redis(testServices.redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(queueName, { connection });
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  await connection.quit();
  if (pool) await endPool(pool);
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe("sluice lifecycle commands", () => {
  it("start registers the spec and queues its first batch; pause, resume and stop are recorded with the reason", async () => {
    const spec = path.join(dir, "orders.yaml");
    await writeFile(
      spec,
      `name: orders\nowner: shop\nsource: { kafka: { topic: orders } }\nformat: json\ncontract: { fields: { id: string } }\nsink: { postgres: { table: orders } }\ntrigger: { every: 5s }\n`,
    );
    const started = await sluice("start", spec, "first", "deploy");
    expect(started).toMatchObject({ code: 0 });
    expect(started.stdout).toContain("orders version 1: start → running");

    const connection = new Redis(testServices.redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue(queueName, { connection });
    const jobs = await queue.getJobs(["waiting", "delayed", "prioritized"]).finally(async () => {
      await queue.close();
      await connection.quit();
    });
    expect(jobs.map((j) => j.name)).toEqual(["batch.run"]);

    expect((await sluice("pause", "orders", "upstream", "incident")).stdout).toContain("pause → paused");
    expect(await sluice("start", "orders")).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/cannot start: the pipeline version is paused.*use resume/),
    });
    expect((await sluice("resume", "orders")).stdout).toContain("resume → running");
    // Two workers died running batch 4 (the run row as their claims leave it): status says so.
    await pool.query(`UPDATE pipeline_runs SET attempt_batch_id = 4, unfinished_attempts = 2`);
    expect((await sluice("status", "orders")).stdout).toContain(
      "batch 4 started 2 times without finishing (workers died running it?)",
    );
    expect((await sluice("stop", "orders")).stdout).toContain("stop → stopped");
    expect((await sluice("status", "orders")).stdout).toContain("run (table pipeline_runs): stopped");

    const history = await pool.query(
      `SELECT action, reason, actor FROM pipeline_run_transitions ORDER BY id`,
    );
    expect(history.rows.map((r) => [r.action, r.reason])).toEqual([
      ["start", "first deploy"],
      ["pause", "upstream incident"],
      ["resume", ""],
      ["stop", ""],
    ]);
    expect(history.rows.map((r) => r.actor)).toEqual([
      "cli:owner@shop.test",
      "cli:owner@shop.test",
      "cli:owner@shop.test",
      "cli:owner@shop.test",
    ]);
  });

  it("acts only as a known, enabled user whose role and team allow it; a refusal exits 5 and changes nothing", async () => {
    const before = (await pool.query(`SELECT count(*)::int AS n FROM pipeline_run_transitions`)).rows[0].n;
    expect(await sluiceAs(undefined, "resume", "orders")).toMatchObject({
      code: 5,
      stderr: expect.stringContaining(
        "who is acting? This command changes something: set SLUICE_ACTOR=<your email> or pass --as <email>",
      ),
    });
    expect(await sluiceAs("nobody@shop.test", "resume", "orders")).toMatchObject({
      code: 5,
      stderr: expect.stringContaining("SLUICE_ACTOR=nobody@shop.test: no Sluice user has this email"),
    });
    expect(await sluiceAs(undefined, "resume", "orders", "--as", "gone@shop.test")).toMatchObject({
      code: 5,
      stderr: expect.stringContaining("--as=gone@shop.test: this user is disabled"),
    });
    expect(await sluiceAs("viewer@shop.test", "resume", "orders")).toMatchObject({
      code: 5,
      stderr: expect.stringMatching(
        /not allowed: viewer@shop.test \(viewer\): Only operator, owner \(of the pipeline's team\) or admin may start, pause/,
      ),
    });
    const otherTeam = await sluiceAs("owner@elsewhere.test", "resume", "orders");
    expect(otherTeam).toMatchObject({
      code: 5,
      stderr: expect.stringContaining('"orders" — it belongs to shop; your teams: elsewhere'),
    });
    expect((await pool.query(`SELECT count(*)::int AS n FROM pipeline_run_transitions`)).rows[0].n).toBe(
      before,
    );

    // An operator runs the whole fleet (but registers no specs); --as wins over SLUICE_ACTOR.
    expect(
      (await sluiceAs("viewer@shop.test", "start", "orders", "--as", "operator@ops.test")).stdout,
    ).toContain("start → running");
    const spec = path.join(dir, "orders-v2.yaml");
    await writeFile(
      spec,
      `name: orders\nowner: shop\nsource: { kafka: { topic: orders } }\nformat: json\ncontract: { fields: { id: string, note: string? } }\nsink: { postgres: { table: orders } }\ntrigger: { every: 5s }\n`,
    );
    expect(await sluiceAs("operator@ops.test", "start", spec)).toMatchObject({
      code: 5,
      stderr: expect.stringContaining("may register a pipeline or a new version"),
    });
    expect((await pool.query(`SELECT count(*)::int AS n FROM pipeline_versions`)).rows[0].n).toBe(1);
  });

  it("name@N and --version N act on that version only; the output names it and the other versions still running", async () => {
    // orders v1 runs (started above by the operator); v2 with fresh state in a table of its own runs beside it.
    const spec = path.join(dir, "orders-beside.yaml");
    await writeFile(
      spec,
      `name: orders\nowner: shop\nsource: { kafka: { topic: orders } }\nformat: json\ncontract: { fields: { id: string } }\nsink: { postgres: { table: orders_v2 } }\ntrigger: { every: 10s }\n`,
    );
    const started = await sluice("start", spec, "--fresh-state", "beside");
    expect(started).toMatchObject({ code: 0 });
    expect(started.stdout).toContain("orders version 2: start → running");
    expect(started.stdout).toContain(
      "also not stopped: orders version 1 (running) — act on it with npx sluice <command> orders@1",
    );
    const phases = async () =>
      (
        await pool.query(
          `SELECT v.version, r.status::text || '/' || r.desired_state::text AS phase FROM pipeline_versions v
             JOIN pipeline_runs r ON r.pipeline_version_id = v.id ORDER BY v.version`,
        )
      ).rows.map((r) => [r.version, r.phase]);
    expect(await phases()).toEqual([
      [1, "running/running"],
      [2, "running/running"],
    ]);
    const paused = await sluice("pause", "orders@1", "only", "the", "old", "one");
    expect(paused.stdout).toContain("orders version 1: pause → paused");
    expect(paused.stdout).toContain("also not stopped: orders version 2 (running)");
    expect(await phases()).toEqual([
      [1, "paused/paused"],
      [2, "running/running"],
    ]);
    expect((await sluice("stop", "orders", "--version", "1")).stdout).toContain(
      "orders version 1: stop → stopped",
    );
    expect((await sluice("pause", "orders")).stdout).toContain("orders version 2: pause → paused");
    expect(await phases()).toEqual([
      [1, "stopped/stopped"],
      [2, "paused/paused"],
    ]);
    expect(await sluice("stop", "orders@9")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("orders has no version 9 (its versions: 1, 2)"),
    });
    expect(await sluice("stop", "orders@2", "--version", "1")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("orders@2 and --version 1 name different versions: give one"),
    });
    const audit = await pool.query(
      `SELECT action, reason, after->>'version' AS version FROM audit_events WHERE action IN ('pipeline.pause', 'pipeline.stop') ORDER BY id`,
    );
    expect(audit.rows.slice(-3)).toEqual([
      { action: "pipeline.pause", reason: "only the old one", version: "1" },
      { action: "pipeline.stop", reason: "", version: "1" },
      { action: "pipeline.pause", reason: "", version: "2" },
    ]);
  });

  it("an unknown pipeline exits 1 and says how to start one", async () => {
    const res = await sluice("pause", "no-such-pipeline");
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('no pipeline named "no-such-pipeline"');
  });
});
