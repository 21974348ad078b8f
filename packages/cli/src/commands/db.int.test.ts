// Every sluice command against a database that is not ready, as a new user meets it (the real CLI
// process): one that does not exist, one without Sluice's tables, one whose migrations are behind, and
// a server that is down. Each says what is wrong and the command that fixes it, prints no stack trace,
// and exits 1 (2 for the server that is down); `sluice db migrate` then makes the database ready.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerSpec, runSluice, specDir } from "@sluice/engine/testing";
import {
  createTestDatabase,
  databaseUrlFor,
  freePort,
  testServices,
  uniqueName,
  type TestDatabase,
} from "@sluice/testing";

let specs: Awaited<ReturnType<typeof specDir>>;
let specFile: string;
let behind: TestDatabase;
const missing = uniqueName("t_cli_missing");
const empty = uniqueName("t_cli_empty");
const admin = () => new pg.Client({ connectionString: databaseUrlFor(testServices.databaseUrl, "postgres") });

beforeAll(async () => {
  specs = await specDir();
  specFile = await specs.write("orders", ledgerSpec(uniqueName("cli_db"), { name: "orders" }));
  const c = admin();
  await c.connect();
  await c.query(`CREATE DATABASE ${empty}`);
  await c.end();
  behind = await createTestDatabase("cli_behind");
  const b = new pg.Client({ connectionString: behind.url });
  await b.connect();
  await b.query(
    `DELETE FROM _prisma_migrations WHERE migration_name = (SELECT max(migration_name) FROM _prisma_migrations)`,
  );
  await b.end();
});
afterAll(async () => {
  const c = admin();
  await c.connect();
  for (const db of [missing, empty]) await c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await c.end();
  await behind?.drop();
  await specs?.cleanup();
});

// One command of each kind that opens the database (webhooks retry shares webhooks' path, resume/stop/restart pause's).
const everyCommand = () => [
  ["run", specFile, "--once"],
  ["start", specFile],
  ["status", "orders"],
  ["pause", "orders"],
  ["webhooks", "orders"],
  ["validate", specFile, "--against-registered"],
  ["db", "status"],
];
const someCommands = () => [
  ["run", specFile, "--once"],
  ["status", "orders"],
];

/** Runs each command against each database, all at once (CLI start-up is the slow part); the results by database. */
async function runAll(runs: { databaseUrl: string; commands: string[][]; extra?: Record<string, string> }[]) {
  const results = await Promise.all(
    runs.flatMap(({ databaseUrl, commands, extra }) =>
      commands.map(async (args) => ({
        databaseUrl,
        command: args.join(" "),
        ...(await runSluice(args, { databaseUrl, ...(extra ? { extra } : {}) })),
      })),
    ),
  );
  return (databaseUrl: string) => results.filter((r) => r.databaseUrl === databaseUrl);
}

type Result = { command: string; code: number | null; stdout: string; stderr: string };

function expectExplained(results: Result[], code: number, says: RegExp[]): void {
  expect(results.length).toBeGreaterThan(0);
  for (const r of results) {
    expect({ command: r.command, code: r.code }).toEqual({ command: r.command, code });
    for (const pattern of says)
      expect({ command: r.command, stderr: r.stderr }).toEqual({
        command: r.command,
        stderr: expect.stringMatching(pattern),
      });
    // One explanation, not a stack trace.
    expect({ command: r.command, output: `${r.stdout}\n${r.stderr}` }).toEqual({
      command: r.command,
      output: expect.not.stringMatching(/^\s+at |node_modules|Error:/m),
    });
  }
}

describe("sluice commands on a database that is not ready", () => {
  // 18 CLI processes at once: slow on a busy machine.
  it("every command says what is wrong and the command that fixes it: a missing database, one without tables, one behind, a server that is down", async () => {
    const missingUrl = databaseUrlFor(testServices.databaseUrl, missing);
    const emptyUrl = databaseUrlFor(testServices.databaseUrl, empty);
    const downUrl = `postgresql://postgres@127.0.0.1:${await freePort()}/sluice`;
    const results = await runAll([
      { databaseUrl: missingUrl, commands: everyCommand() },
      { databaseUrl: emptyUrl, commands: everyCommand() },
      { databaseUrl: behind.url, commands: someCommands() },
      // One retry instead of eight (two minutes): the message and exit code after the last retry are the same.
      { databaseUrl: downUrl, commands: someCommands(), extra: { SLUICE_RUN_RETRIES: "1" } },
    ]);
    expectExplained(results(missingUrl), 1, [
      new RegExp(`database "${missing}" on \\S+ \\(DATABASE_URL\\) does not exist`),
      /npx sluice db migrate/,
      new RegExp(`createdb -h \\S+ -p \\d+ .*${missing}`),
    ]);
    expectExplained(results(emptyUrl), 1, [
      new RegExp(`database "${empty}" .* has no Sluice tables`),
      /Create them: npx sluice db migrate/,
    ]);
    expectExplained(results(behind.url), 1, [
      /lacks 1 of this version's migrations \(\d{14}_\w+\)\. Apply them: npx sluice db migrate/,
    ]);
    expectExplained(results(downUrl), 2, [
      /Postgres at 127\.0\.0\.1:\d+ is not reachable \(connect ECONNREFUSED/,
      /npm run services:start/,
    ]);
  }, 240_000);

  it("sluice db migrate creates a missing database and migrates it, and migrates an empty one; then the commands work", async () => {
    const [missingUrl, emptyUrl] = [missing, empty].map((db) => databaseUrlFor(testServices.databaseUrl, db));
    const [created, migrated] = await Promise.all([
      runSluice(["db", "migrate"], { databaseUrl: missingUrl! }),
      runSluice(["db", "migrate"], { databaseUrl: emptyUrl! }),
    ]);
    expect({ code: created.code, stdout: created.stdout }).toEqual({
      code: 0,
      stdout: expect.stringMatching(
        new RegExp(`database "${missing}" on \\S+: created\n.*\n.*: ready \\(\\d+ migrations applied\\)`),
      ),
    });
    expect({ code: migrated.code, stdout: migrated.stdout }).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^(?![\s\S]*created)[\s\S]*: ready \(\d+ migrations applied\)/),
    });

    const [status, again, unknown] = await Promise.all([
      runSluice(["db", "status"], { databaseUrl: missingUrl! }),
      runSluice(["db", "migrate"], { databaseUrl: emptyUrl! }),
      // The tables are there: an unknown pipeline is now the only problem.
      runSluice(["status", "orders"], { databaseUrl: missingUrl! }),
    ]);
    expect(status).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/: ready, \d+ migrations applied/),
    });
    expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining("up to date") });
    expect(unknown).toMatchObject({ code: 1, stderr: expect.stringContaining('no pipeline named "orders"') });
  });
});
