// A fresh, migrated database for one benchmark run, so a run never touches the demo's pipelines
// and leaves nothing behind (close() at the end), with the run's connection pool.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { databaseUrlFor, endPool } from "@sluice/testing";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

async function admin<T>(serverUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrlFor(serverUrl, "postgres") });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface ScratchDatabase {
  url: string;
  pool: pg.Pool;
  /** Ends the pool (waiting for its connections to close), then drops the database unless `keep`. */
  close(opts?: { keep?: boolean }): Promise<void>;
}

export async function createScratchDatabase(serverUrl: string): Promise<ScratchDatabase> {
  const name = `sluice_bench_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  await admin(serverUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = databaseUrlFor(serverUrl, name);
  execFileSync("npx", ["prisma", "migrate", "deploy"], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATABASE_URL: url },
    stdio: "pipe",
  });
  // Idle connections stay open: postgresCpuMs sums the database's backends, and one closing between
  // two samples would take its CPU out of the total.
  const pool = new pg.Pool({ connectionString: url, max: 4, idleTimeoutMillis: 0 });
  // An idle connection dropped by the server must not kill the run with an unhandled 'error' event.
  pool.on("error", (err) => console.error(`idle Postgres connection failed: ${err.message}`));
  return {
    url,
    pool,
    async close(opts = {}) {
      await endPool(pool);
      if (!opts.keep) await admin(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
