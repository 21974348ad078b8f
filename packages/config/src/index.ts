// Typed, validated configuration for every Sluice process. This is the one place that reads
// process.env (lint bans it elsewhere); each entry point parses what it needs and passes objects down.
import { z } from "zod";

export const ZServiceEnv = z.object({
  DATABASE_URL: z.string().url().default("postgresql://postgres@127.0.0.1:5432/sluice"),
  REDIS_URL: z.string().url().default("redis://127.0.0.1:6379"),
  KAFKA_BROKERS: z
    .string()
    .default("127.0.0.1:9092")
    .transform((s) =>
      s
        .split(",")
        .map((b) => b.trim())
        .filter(Boolean),
    ),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /**
   * Internal receivers Sluice may send webhooks and notifications to (comma-separated addresses or
   * CIDR ranges, optionally :port): every other loopback, private, link-local or reserved address is
   * refused at connect time (@sluice/outbound-http, docs/security.md).
   */
  SLUICE_OUTBOUND_ALLOW: z.string().default(""),
  /**
   * Signs every webhook and alert notification (Standard Webhooks); each pipeline and team gets its own
   * secret derived from it (`sluice signing-secret`). The same on the workers, the console and the CLI.
   */
  SLUICE_SIGNING_KEY: z
    .string()
    .min(32, "SLUICE_SIGNING_KEY must be at least 32 characters (try `openssl rand -base64 48`)")
    .optional(),
});
export type TServiceEnv = z.infer<typeof ZServiceEnv>;

/** `sluice run`: how many times it retries an outage (1, 2, 4, 8, 16, 30 s, …) before it exits 2. */
export const ZRunEnv = z.object({
  SLUICE_RUN_RETRIES: z.coerce.number().int().min(0).max(100).default(8),
});

/** Email contact points: the SMTP server the workers and the console send alert email through. */
export const ZSmtpEnv = z.object({
  /** smtp://[user:password@]host[:port] (STARTTLS when the server offers it) or smtps://… ; unset: no email. */
  SLUICE_SMTP_URL: z
    .url({
      protocol: /^smtps?$/,
      error: "SLUICE_SMTP_URL is smtp://[user:password@]host[:port] or smtps://…",
    })
    .optional(),
  /** The From of alert email. */
  SLUICE_SMTP_FROM: z.string().min(3).default("Sluice alerts <sluice-alerts@localhost>"),
});

/** The SMTP settings for email contact points, or null when SLUICE_SMTP_URL is unset. */
export function smtpOptions(env: z.infer<typeof ZSmtpEnv>): { url: string; from: string } | null {
  return env.SLUICE_SMTP_URL ? { url: env.SLUICE_SMTP_URL, from: env.SLUICE_SMTP_FROM } : null;
}

export const ZWorkerEnv = ZServiceEnv.extend({
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /**
   * The address the metrics endpoint listens on. The default answers this machine only; a Prometheus
   * on another machine needs 0.0.0.0 (or this machine's address) — the endpoint has no sign-in.
   */
  WORKER_METRICS_HOST: z.string().min(1).default("127.0.0.1"),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  WORKER_QUEUE: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]*$/)
    .default("sluice.batches"),
  /** Consecutive failed batches (transient errors) before a pipeline version enters `failed`. */
  WORKER_MAX_CONSECUTIVE_FAILURES: z.coerce.number().int().min(1).max(100).default(5),
  /**
   * Attempts of one batch that may start and never finish (the worker running it died, e.g. out of
   * memory) before the version enters `failed` — so a poison batch cannot kill workers forever.
   */
  WORKER_MAX_UNFINISHED_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(3),
  /** First retry delay of a failed batch; doubles per attempt, capped at 30 s. */
  WORKER_RETRY_BASE_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  /** How often each worker compares the queue with the run state in Postgres (and rebuilds lost jobs). */
  WORKER_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(200).max(600_000).default(5000),
  /** Heartbeat period; keep it well under 30 s, after which a worker counts as dead. */
  WORKER_HEARTBEAT_INTERVAL_MS: z.coerce.number().int().min(200).max(15_000).default(5000),
  /** A job whose worker stops renewing its lock for this long is stalled and re-run by another worker. */
  WORKER_LOCK_DURATION_MS: z.coerce.number().int().min(1000).max(600_000).default(15_000),
  /** SIGTERM: how long in-flight batches may take to commit before they are abandoned (safely, before commit). */
  WORKER_SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(30_000),
  /** Close a warm runner (its Kafka consumer) after this long without a batch. */
  WORKER_IDLE_RUNNER_MS: z.coerce.number().int().min(1000).max(86_400_000).default(300_000),
  /** Postgres connections per worker process (engine and control plane share them). */
  WORKER_PG_POOL_MAX: z.coerce.number().int().min(2).max(100).default(6),
  /** How often each worker samples the topics' latest offsets for the console's backlog and input-rate charts. */
  WORKER_OFFSET_SAMPLE_INTERVAL_MS: z.coerce.number().int().min(1000).max(600_000).default(10_000),
  /**
   * How often each running blue/green rollout is reconciled (blue against green, stored): what the
   * rollout page shows and a promotion must pass. One at a time per rollout across workers.
   */
  WORKER_ROLLOUT_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(1000).max(86_400_000).default(60_000),
  /** How often the alert rules are evaluated (one worker at a time, whichever holds the lease). */
  WORKER_ALERT_INTERVAL_MS: z.coerce.number().int().min(500).max(600_000).default(5000),
  /** First retry delay of an alert notification the receiver refused; doubles per attempt, capped at 10 min. */
  WORKER_ALERT_RETRY_BASE_MS: z.coerce.number().int().min(10).max(600_000).default(5000),
  /** The console's address, for the pipeline link in alert notifications (no link when unset). */
  SLUICE_PUBLIC_URL: z.string().url().optional(),
}).extend(ZSmtpEnv.shape);
export type TWorkerEnv = z.infer<typeof ZWorkerEnv>;

/** Parse env for a process entry point; on failure print every problem and what to set. */
export function loadEnv<S extends z.ZodTypeAny>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
  throw new Error(`Invalid environment:\n${lines.join("\n")}\nSee README.md "Environment variables".`);
}

/**
 * Variables a pipeline spec names for its secrets (a webhook's urlFromEnv / headersFromEnv), looked
 * up when the pipeline starts: the spec names the variable, the process environment holds the value.
 */
export function pipelineEnv(env: NodeJS.ProcessEnv = process.env): (name: string) => string | undefined {
  return (name) => env[name];
}

/** The environment for a child process: this process's, with `overrides` on top. */
export function childEnv(
  overrides: Record<string, string>,
  env: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  return { ...env, ...overrides };
}

/** Next.js instrumentation runs in both runtimes; the console's Node-only work starts only in Node. */
export function isNodeRuntime(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.NEXT_RUNTIME === "nodejs";
}

/** `next dev`: React's development build evaluates code at run time, which the console's CSP must then allow. */
export function isNextDev(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.NODE_ENV === "development";
}
