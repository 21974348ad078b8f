// Each integration test file gets its own database, cloned from a migrated template so that it
// never touches the demo's data or another test file's (and cloning is much faster than migrating).
import { execFileSync } from "node:child_process";
import pg from "pg";
import { uniqueName } from "./names";
import { databaseUrlFor, testServices } from "./services";

export const TEMPLATE_DATABASE = "sluice_test_template";

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrlFor(testServices.databaseUrl, "postgres") });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** (Re)create the template database and apply every Prisma migration to it. Run once per test run. */
export async function prepareTemplateDatabase(repoRoot: string): Promise<void> {
  await withAdmin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  });
  execFileSync("npx", ["prisma", "migrate", "deploy"], {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: databaseUrlFor(testServices.databaseUrl, TEMPLATE_DATABASE) },
    stdio: "pipe",
  });
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database for one test file. Call `drop()` in afterAll. */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = uniqueName(`t_${label}`);
  await withAdmin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`));
  return {
    name,
    url: databaseUrlFor(testServices.databaseUrl, name),
    drop: () => withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
