// A Postgres cluster of the test's own (Debian's PostgreSQL 15 binaries: initdb + pg_ctl in a temp dir
// on a free loopback port), for tests that stop and start Postgres under a running process: the
// shared server on 5432 serves everyone else's tests at the same time and is never touched.
// Its processes and directory are removed by destroy(), and killed when the test process exits.
import { execFile } from "node:child_process";
import { chown, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { applyMigrations } from "@sluice/db";
import { freePort } from "./free-port";

const run = promisify(execFile);
const BIN = process.env.SLUICE_PG_BIN ?? "/usr/lib/postgresql/15/bin";

export interface PrivatePostgres {
  port: number;
  /** A URL for `database` on this cluster (trust auth, user postgres). */
  url(database: string): string;
  /** Create `database` and apply Sluice's migrations to it; its URL. */
  createMigratedDatabase(database: string): Promise<string>;
  /** pg_ctl stop -m fast (clients are disconnected at once), waiting until it is down. */
  stop(): Promise<void>;
  /** Start it again, waiting until it accepts connections. */
  start(): Promise<void>;
  /** Stop it (immediately) and remove its directory. */
  destroy(): Promise<void>;
}

/** Postgres refuses to run as root: the cluster's files and processes belong to the postgres user then. */
function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args];
}

async function pgCtl(dataDir: string, ...args: string[]): Promise<void> {
  const [cmd, argv] = asPostgres(path.join(BIN, "pg_ctl"), ["-D", dataDir, ...args]);
  // -w waits for the server (start: accepting connections; stop: gone); -t bounds it generously for a loaded machine.
  await run(cmd, argv, { timeout: 180_000 });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = await mkdtemp(path.join(tmpdir(), "sluice-pg-"));
  if (process.getuid?.() === 0) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const dataDir = path.join(dir, "data");
  const port = await freePort();
  const [initdb, initArgs] = asPostgres(path.join(BIN, "initdb"), [
    "-D",
    dataDir,
    "-U",
    "postgres",
    "--auth=trust",
    "-E",
    "UTF8",
    "--no-sync",
  ]);
  await run(initdb, initArgs, { timeout: 180_000 });
  // Its own socket directory and port; fsync off — a test cluster's data may be lost on a machine crash.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=50`;
  const start = () =>
    pgCtl(dataDir, "-w", "-t", "120", "-o", options, "-l", path.join(dir, "server.log"), "start");
  const readPid = async () =>
    Number((await readFile(path.join(dataDir, "postmaster.pid"), "utf8")).split("\n")[0]);
  const url = (database: string) => `postgresql://postgres@127.0.0.1:${port}/${database}`;
  let running = false;
  let postmasterPid: number | undefined;
  // If the test process dies without destroy(), take the server with it.
  const killOnExit = () => {
    try {
      if (postmasterPid) process.kill(postmasterPid, "SIGQUIT");
    } catch {
      // already gone
    }
  };
  await start();
  running = true;
  postmasterPid = await readPid();
  process.once("exit", killOnExit);
  return {
    port,
    url,
    async createMigratedDatabase(database) {
      const admin = new pg.Client({ connectionString: url("postgres") });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`).finally(() => admin.end());
      const migrated = await applyMigrations({ ...process.env, DATABASE_URL: url(database) });
      if (migrated.code !== 0)
        throw new Error(`prisma migrate deploy on the private cluster failed:\n${migrated.output}`);
      return url(database);
    },
    async stop() {
      await pgCtl(dataDir, "-w", "-t", "120", "-m", "fast", "stop");
      running = false;
    },
    async start() {
      await start();
      running = true;
      postmasterPid = await readPid();
    },
    async destroy() {
      process.removeListener("exit", killOnExit);
      if (running) await pgCtl(dataDir, "-w", "-t", "60", "-m", "immediate", "stop").catch(killOnExit);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
