// A fresh, migrated database for one benchmark run, so a run never touches the demo's pipelines
// and leaves nothing behind (drop() at the end).
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

function urlFor(serverUrl: string, database: string): string {
  const u = new URL(serverUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin<T>(serverUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: urlFor(serverUrl, "postgres") });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createScratchDatabase(serverUrl: string): Promise<ScratchDatabase> {
  const name = `sluice_bench_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  await admin(serverUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = urlFor(serverUrl, name);
  execFileSync("npx", ["prisma", "migrate", "deploy"], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATABASE_URL: url },
    stdio: "pipe",
  });
  return {
    url,
    drop: () =>
      admin(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
