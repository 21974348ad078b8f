// The lifecycle commands as an operator types them: `sluice start <spec>` registers and starts the
// version (queueing its first batch for the workers), pause/resume/stop change the run state and are
// recorded with who and why, and a command that does not apply exits 1 saying what to do instead.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, endPool, testServices, uniqueName, type TestDatabase } from "@sluice/testing";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const queueName = uniqueName("cli_lifecycle");
let database: TestDatabase;
let pool: pg.Pool;
let dir: string;

function sluice(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", path.join(REPO_ROOT, "packages/cli/src/main.ts"), ...args],
      { cwd: REPO_ROOT, env: { ...process.env, DATABASE_URL: database.url, WORKER_QUEUE: queueName } },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  database = await createTestDatabase("cli_lifecycle");
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
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
    expect(await sluice("start", "orders")).toMatchObject({ code: 1, stderr: expect.stringMatching(/cannot start: the pipeline version is paused.*use resume/) });
    expect((await sluice("resume", "orders")).stdout).toContain("resume → running");
    expect((await sluice("stop", "orders")).stdout).toContain("stop → stopped");
    expect((await sluice("status", "orders")).stdout).toContain("run (table pipeline_runs): stopped");

    const history = await pool.query(`SELECT action, reason, actor FROM pipeline_run_transitions ORDER BY id`);
    expect(history.rows.map((r) => [r.action, r.reason])).toEqual([
      ["start", "first deploy"],
      ["pause", "upstream incident"],
      ["resume", ""],
      ["stop", ""],
    ]);
    expect(history.rows[0].actor).toMatch(/^cli:/);
  });

  it("an unknown pipeline exits 1 and says how to start one", async () => {
    const res = await sluice("pause", "no-such-pipeline");
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('no pipeline named "no-such-pipeline"');
  });
});
