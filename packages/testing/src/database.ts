// Each integration test file gets its own database, cloned from a migrated template so that it
// never touches the demo's data or another test file's (and cloning is much faster than migrating).
import { execFileSync } from "node:child_process";
import pg from "pg";
import { uniqueName } from "./names";
import { databaseUrlFor, testServices } from "./services";

// One template per test run (named by the global setup and handed to test workers through the
// environment), so concurrent test runs on one machine never drop each other's template.
const TEMPLATE_ENV = "SLUICE_TEST_TEMPLATE";
export function templateDatabase(): string {
  const name = process.env[TEMPLATE_ENV];
  if (!name)
    throw new Error(`${TEMPLATE_ENV} is not set: run integration tests through vitest's integration project`);
  return name;
}

// CREATE DATABASE ... TEMPLATE fails while anything else is connected to the template, DROP DATABASE
// while anything is connected to the database (object_in_use).
const TEMPLATE_BUSY = "55006";

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrlFor(testServices.databaseUrl, "postgres") });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Create this run's template database and apply every Prisma migration to it. Returns a cleanup. */
export async function prepareTemplateDatabase(repoRoot: string): Promise<() => Promise<void>> {
  const name = uniqueName("sluice_tpl");
  process.env[TEMPLATE_ENV] = name;
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`));
  execFileSync("npx", ["prisma", "migrate", "deploy"], {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: databaseUrlFor(testServices.databaseUrl, name) },
    stdio: "pipe",
  });
  return () =>
    withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined);
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database for one test file. Call `drop()` in afterAll. */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = uniqueName(`t_${label}`);
  const template = templateDatabase();
  for (let attempt = 1; ; attempt++) {
    try {
      await withAdmin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
      break;
    } catch (err) {
      if ((err as { code?: string }).code !== TEMPLATE_BUSY || attempt >= 10) throw err;
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
  return {
    name,
    url: databaseUrlFor(testServices.databaseUrl, name),
    drop: () => dropDatabase(name),
  };
}

// WITH (FORCE) terminates the sessions it finds, but one that connects during the drop (a pool
// reconnecting as a killed worker's test tears down) still makes it fail with 55006: try again.
async function dropDatabase(name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== TEMPLATE_BUSY || attempt >= 10) throw err;
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}
