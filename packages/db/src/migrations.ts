// Whether a database is ready for Sluice (exists, has every migration of this checkout), and making it
// so: creating the database and applying the migrations through the same route `npm run db:migrate`
// takes (Prisma's `migrate deploy` with prisma.config.ts). Used by `sluice db` and by every command
// before it touches the database, so a missing database or table is reported with what to do.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

/**
 * The checkout: the nearest directory above this module holding prisma/migrations — found, not
 * counted, because the same code also runs bundled from elsewhere in the checkout (the tests' builds).
 */
export const REPO_ROOT = findUp(path.dirname(fileURLToPath(import.meta.url)));

function findUp(dir: string): string {
  for (let d = dir; ; d = path.dirname(d)) {
    if (existsSync(path.join(d, "prisma/migrations"))) return d;
    if (path.dirname(d) === d) return path.resolve(dir, "../../.."); // not in a checkout: as laid out
  }
}
export const MIGRATIONS_DIR = path.join(REPO_ROOT, "prisma/migrations");

/** Where a database URL points, without its credentials (for messages). */
export function describeDatabaseUrl(url: string): { server: string; database: string } {
  const u = new URL(url);
  return {
    server: `${u.hostname}:${u.port || "5432"}`,
    database: decodeURIComponent(u.pathname.replace(/^\//, "")) || "postgres",
  };
}

export type TDatabaseState =
  | { kind: "ready"; applied: string[] }
  /** Applied migrations are missing some of this checkout's (in `pending`, oldest first). */
  | { kind: "behind"; applied: string[]; pending: string[] }
  /** The database exists but has no Sluice tables. */
  | { kind: "empty" }
  | { kind: "missing" }
  /** Nothing answers, or the connection broke: worth waiting for. */
  | { kind: "unreachable"; error: string }
  /** The server answered but refused (authentication, privileges): a configuration problem. */
  | { kind: "refused"; error: string };

/** This checkout's migrations, oldest first (the directory names Prisma records). */
export async function migrationNames(): Promise<string[]> {
  const entries = await readdir(MIGRATIONS_DIR, { withFileTypes: true });
  const names: string[] = [];
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const sql = await stat(path.join(MIGRATIONS_DIR, e.name, "migration.sql")).catch(() => undefined);
    if (sql?.isFile()) names.push(e.name);
  }
  return names.sort();
}

const UNDEFINED_TABLE = "42P01";
const INVALID_CATALOG = "3D000";

export async function databaseState(url: string): Promise<TDatabaseState> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
  } catch (err) {
    return connectFailure(err);
  }
  try {
    const res = await client.query<{ migration_name: string }>(
      `SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
    );
    const applied = res.rows.map((r) => r.migration_name);
    const done = new Set(applied);
    const pending = (await migrationNames()).filter((m) => !done.has(m));
    return pending.length > 0 ? { kind: "behind", applied, pending } : { kind: "ready", applied };
  } catch (err) {
    if ((err as { code?: string }).code === UNDEFINED_TABLE) return { kind: "empty" };
    return connectFailure(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function connectFailure(err: unknown): TDatabaseState {
  const e = err as { code?: string; severity?: string; message?: string };
  if (e.code === INVALID_CATALOG) return { kind: "missing" };
  const message = e.message ?? String(err);
  // An answer from the server (an SQLSTATE) other than "try again later" is a configuration problem.
  if (typeof e.severity === "string" && e.code && !["08", "53", "57"].includes(e.code.slice(0, 2)))
    return { kind: "refused", error: message };
  return { kind: "unreachable", error: message };
}

export const MIGRATE_COMMAND = "npx sluice db migrate";

/** What is wrong with the database and what to do, or undefined when it is ready. */
export function explainDatabaseState(state: TDatabaseState, url: string): string | undefined {
  const { server, database } = describeDatabaseUrl(url);
  const where = `database "${database}" on ${server} (DATABASE_URL)`;
  switch (state.kind) {
    case "ready":
      return undefined;
    case "missing": {
      const user = decodeURIComponent(new URL(url).username);
      const [host, port] = server.split(":");
      return `${where} does not exist. Create it with Sluice's tables: ${MIGRATE_COMMAND} (it creates the database first) — or by hand: createdb -h ${host} -p ${port}${user ? ` -U ${user}` : ""} ${database}, then ${MIGRATE_COMMAND}`;
    }
    case "empty":
      return `${where} has no Sluice tables. Create them: ${MIGRATE_COMMAND} (the migrations npm run db:migrate applies)`;
    case "behind":
      return `${where} lacks ${state.pending.length} of this version's migrations (${state.pending.join(", ")}). Apply them: ${MIGRATE_COMMAND}`;
    case "unreachable":
      return `Postgres at ${server} is not reachable (${state.error}). Start it (npm run services:start), or point DATABASE_URL at a running server`;
    case "refused":
      return `Postgres at ${server} refused the connection: ${state.error}. Check the user, password and database in DATABASE_URL`;
  }
}

/** CREATE DATABASE from the server's `postgres` maintenance database; false if it already existed. */
export async function createDatabaseIfMissing(url: string): Promise<boolean> {
  const { database } = describeDatabaseUrl(url);
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 10_000 });
  client.on("error", () => undefined);
  await client.connect();
  try {
    const exists = await client.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [database]);
    if (exists.rowCount) return false;
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * `prisma migrate deploy` against the database of `env.DATABASE_URL`, run from the repository root so
 * it reads prisma.config.ts (JS engine, no native binary) — exactly what `npm run db:migrate` runs.
 * `env` is the child's whole environment. Resolves with its exit code and output (also written to
 * stderr as it comes with `echo`).
 */
export function applyMigrations(
  env: NodeJS.ProcessEnv,
  opts: { echo?: boolean } = {},
): Promise<{ code: number; output: string }> {
  const prisma = path.join(
    path.dirname(createRequire(import.meta.url).resolve("prisma/package.json")),
    "build/index.js",
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [prisma, "migrate", "deploy"], {
      cwd: REPO_ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const take = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (opts.echo) process.stderr.write(chunk);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}
