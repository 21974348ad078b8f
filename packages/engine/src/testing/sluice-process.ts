// The `sluice` command as a real child process, for tests that kill it, race two of it, or read its
// exit code, against a test database and topic (the bundled CLI of the integration run, testing/entrypoints.ts).
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { testServices, entrypointArgs } from "@sluice/testing";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");

export interface SluiceProcess {
  child: ChildProcess;
  /** Every stdout line so far (progress lines: "batch 3: ..."). */
  stdout: string[];
  stderr: string[];
  /** Resolves with the exit code, or the signal name when killed. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when stdout has printed `n` lines matching `pattern` (or the process exits first: false). */
  waitForLines(pattern: RegExp, n: number): Promise<boolean>;
}

export interface SluiceEnv {
  /** DATABASE_URL; none: the tests' environment's (`sluice validate` needs no database). */
  databaseUrl?: string;
  kafkaBrokers?: string[];
  /**
   * Who the command acts as (SLUICE_ACTOR). By default TEST_ACTOR, an admin created in the database for
   * it; an email is passed as it is (the test created that user, or means one that does not exist); null
   * leaves SLUICE_ACTOR unset.
   */
  actor?: string | null;
  /** More environment variables (LOG_LEVEL, WORKER_QUEUE, …). */
  extra?: Record<string, string>;
  /** Piped to the command's stdin, which is then closed (not a terminal: how a password is read). */
  input?: string;
  /** Leave stdin piped and open: the test writes to `child.stdin` and ends it when it chooses. */
  holdStdin?: boolean;
}

/** The user these tests' commands act as (SLUICE_ACTOR): an admin, so every command is allowed. */
export const TEST_ACTOR = "engine-tests@sluice.local";

/**
 * Create TEST_ACTOR in the test database if it is not there (synchronously: spawnSluice is). A
 * database that is missing or not migrated is left alone: those tests are about what the CLI says then.
 */
function ensureTestActor(databaseUrl: string): void {
  try {
    execFileSync(
      "psql",
      [
        databaseUrl,
        "-qXc",
        `INSERT INTO users (id, email, name, role) VALUES ('engine-tests', '${TEST_ACTOR}', 'Engine tests', 'admin') ON CONFLICT (email) DO NOTHING`,
      ],
      { stdio: "pipe" },
    );
  } catch {
    // no database or no users table yet
  }
}

export function spawnSluice(args: string[], env: SluiceEnv): SluiceProcess {
  if (env.actor === undefined && env.databaseUrl) ensureTestActor(env.databaseUrl);
  const actor = env.actor === undefined ? TEST_ACTOR : env.actor;
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    ...(env.databaseUrl ? { DATABASE_URL: env.databaseUrl } : {}),
    KAFKA_BROKERS: (env.kafkaBrokers ?? testServices.kafkaBrokers).join(","),
    ...(actor === null ? {} : { SLUICE_ACTOR: actor }),
    ...env.extra,
  };
  if (actor === null) delete childEnv.SLUICE_ACTOR;
  const piped = env.input !== undefined || env.holdStdin === true;
  const child = spawn(process.execPath, [...entrypointArgs("cli"), ...args], {
    cwd: REPO_ROOT,
    env: childEnv,
    stdio: [piped ? "pipe" : "ignore", "pipe", "pipe"],
  });
  if (piped) {
    // A command that exits without reading its stdin must not fail the test with EPIPE.
    child.stdin!.on("error", () => undefined);
    if (env.input !== undefined) child.stdin!.end(env.input);
  }
  const stdout: string[] = [];
  const stderr: string[] = [];
  const waiters: { pattern: RegExp; n: number; resolve: (ok: boolean) => void }[] = [];
  const matching = (pattern: RegExp) => stdout.filter((l) => pattern.test(l)).length;
  createInterface({ input: child.stdout! }).on("line", (line) => {
    stdout.push(line);
    for (const w of [...waiters]) {
      if (matching(w.pattern) >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(true);
      }
    }
  });
  createInterface({ input: child.stderr! }).on("line", (line) => stderr.push(line));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("close", (code, signal) => {
      for (const w of waiters.splice(0)) w.resolve(false);
      resolve({ code, signal });
    });
  });
  let done = false;
  void exited.then(() => (done = true));
  return {
    child,
    stdout,
    stderr,
    exited,
    waitForLines(pattern, n) {
      if (matching(pattern) >= n) return Promise.resolve(true);
      if (done) return Promise.resolve(false);
      return new Promise((resolve) => waiters.push({ pattern, n, resolve }));
    },
  };
}

export interface SluiceResult {
  code: number | null;
  /** The lines printed, joined with "\n" (no trailing newline). */
  stdout: string;
  stderr: string;
}

/** Run `sluice <args>` to completion. */
export function runSluice(args: string[], env: SluiceEnv): Promise<SluiceResult> {
  return sluiceResult(spawnSluice(args, env));
}

/** What a spawned `sluice` printed and its exit code, once it has exited. */
export async function sluiceResult(p: SluiceProcess): Promise<SluiceResult> {
  const { code } = await p.exited;
  return { code, stdout: p.stdout.join("\n"), stderr: p.stderr.join("\n") };
}

/** A temporary directory for spec files; `cleanup()` removes it. */
export async function specDir(): Promise<{
  write(name: string, spec: Record<string, unknown>): Promise<string>;
  cleanup(): Promise<void>;
}> {
  const dir = await mkdtemp(path.join(tmpdir(), "sluice-spec-"));
  return {
    async write(name, spec) {
      const file = path.join(dir, `${name}.json`);
      await writeFile(file, JSON.stringify(spec, null, 2));
      return file;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** "batch 12 (replayed plan): ..." → 12 */
export const PROGRESS_LINE = /^batch (\d+)\b/;
export function committedBatchIds(lines: string[]): number[] {
  return lines.flatMap((l) => {
    const m = PROGRESS_LINE.exec(l);
    return m ? [Number(m[1])] : [];
  });
}
