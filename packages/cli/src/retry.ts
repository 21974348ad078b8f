// How `sluice run` rides out an outage: a transient failure (Postgres restarting, a broker down, a read
// timing out) is retried after 1, 2, 4, 8, 16, 30, 30 and 30 s — two minutes in all (SLUICE_RUN_RETRIES), about
// what a broker or database restart can take — with one line per retry that says what is down; only when the
// last retry fails too does the run exit 2.
import { setTimeout as sleep } from "node:timers/promises";
import { loadEnv, ZRunEnv } from "@sluice/config";
import { describeDatabaseUrl } from "@sluice/db";
import { isRetriable } from "@sluice/engine";
import { retryDelayMs, type TRetryPolicy } from "@sluice/retry-policy";
import { CliError } from "./cli-error";

/**
 * How many retries before exit 2: 8 (two minutes) unless SLUICE_RUN_RETRIES says otherwise — fewer where a
 * supervisor restarts the command anyway, more for longer maintenance windows.
 */
export const runRetries = (): number => loadEnv(ZRunEnv).SLUICE_RUN_RETRIES;
/**
 * 1 s doubling to 30 s. No jitter: one process retries alone, and the retry line says the exact wait.
 */
const RUN_RETRY: TRetryPolicy = { baseMs: 1000, capMs: 30_000 };

export interface Endpoints {
  DATABASE_URL: string;
  KAFKA_BROKERS: string[];
}

/** Worth another attempt? A CliError knows (exit 2: a server that does not answer); else the engine's rule. */
export function isTransient(err: unknown): boolean {
  return err instanceof CliError ? err.exitCode === 2 : isRetriable(err);
}

function causes(err: unknown): Record<string, unknown>[] {
  const chain: Record<string, unknown>[] = [];
  for (
    let e = err;
    typeof e === "object" && e !== null && chain.length < 10;
    e = (e as { cause?: unknown }).cause
  )
    chain.push(e as Record<string, unknown>);
  return chain;
}

const KAFKA_CONNECTION_ERRORS = new Set([
  "KafkaJSConnectionError",
  "KafkaJSConnectionClosedError",
  "KafkaJSRequestTimeoutError",
  "KafkaJSBrokerNotFound",
]);
const PG_CONNECTION_MESSAGE =
  /Connection terminated|not queryable|timeout exceeded when trying to connect|the database system is (starting up|shutting down)/;

function isPostgresConnection(e: Record<string, unknown>, port: string): boolean {
  if (typeof e.severity === "string" && typeof e.code === "string") return /^(08|53|57)/.test(e.code);
  if (e.syscall === "connect" && String(e.port) === port) return true;
  return typeof e.message === "string" && PG_CONNECTION_MESSAGE.test(e.message);
}

/** What failed, for a person: "Kafka at 127.0.0.1:9092 unreachable (…)", "Postgres at … unreachable (…)", or the error. */
export function describeFailure(err: unknown, at: Endpoints): string {
  const chain = causes(err);
  const deepest = String(chain.at(-1)?.message ?? err);
  const kafkajs = chain.filter((e) => typeof e.name === "string" && e.name.startsWith("KafkaJS"));
  if (kafkajs.length > 0) {
    const down = kafkajs.some((e) => KAFKA_CONNECTION_ERRORS.has(String(e.name)));
    return `Kafka at ${at.KAFKA_BROKERS.join(",")} ${down ? "unreachable" : "not ready"} (${deepest})`;
  }
  const { server } = describeDatabaseUrl(at.DATABASE_URL);
  if (chain.some((e) => isPostgresConnection(e, server.split(":")[1]!)))
    return `Postgres at ${server} unreachable (${deepest})`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Run `attempt` until it succeeds, retrying transient failures runRetries() times with a line on stderr
 * each; rethrows the last failure (or a permanent one at once). `signal` ends the wait early (SIGINT).
 */
export async function withRetries<T>(
  at: Endpoints,
  attempt: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  for (let failures = 0; ;) {
    try {
      return await attempt();
    } catch (err) {
      if (!isTransient(err) || ++failures > runRetries() || signal?.aborted) throw err;
      await waitBeforeRetry(err, at, failures, signal);
    }
  }
}

/** The retry line, then the wait (cut short by `signal`). */
export async function waitBeforeRetry(
  err: unknown,
  at: Endpoints,
  failures: number,
  signal?: AbortSignal,
): Promise<void> {
  const delay = retryDelayMs(RUN_RETRY, failures);
  console.error(
    `${describeFailure(err, at)}, retrying in ${Math.round(delay / 1000)} s (attempt ${failures} of ${runRetries()})`,
  );
  await sleep(delay, undefined, signal ? { signal } : undefined).catch(() => undefined);
}
