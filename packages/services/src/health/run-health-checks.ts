// Reachability checks for the services Sluice depends on. Each probe runs concurrently under its own
// deadline, so one dead service makes the report "degraded" quickly instead of hanging the caller
// (a load balancer polling /api/health, or a worker's readiness endpoint).

export interface THealthCheckResult {
  ok: boolean;
  latencyMs: number;
  /** Why the probe failed; credentials in URLs are masked. Absent when ok. */
  error?: string;
}

export interface THealthReport<K extends string> {
  status: "ok" | "degraded";
  checks: Record<K, THealthCheckResult>;
}

/** A probe resolves when the service answered; it receives a signal aborted at the deadline. */
export type THealthProbe = (signal: AbortSignal) => Promise<unknown>;

export async function runHealthChecks<K extends string>(
  probes: Record<K, THealthProbe>,
  options: { timeoutMs?: number; now?: () => number } = {},
): Promise<THealthReport<K>> {
  const timeoutMs = options.timeoutMs ?? 2000;
  const now = options.now ?? (() => performance.now());
  const names = Object.keys(probes) as K[];
  const results = await Promise.all(names.map((name) => runOne(probes[name], timeoutMs, now)));
  const checks = Object.fromEntries(names.map((name, i) => [name, results[i]])) as Record<
    K,
    THealthCheckResult
  >;
  return { status: results.every((r) => r.ok) ? "ok" : "degraded", checks };
}

async function runOne(
  probe: THealthProbe,
  timeoutMs: number,
  now: () => number,
): Promise<THealthCheckResult> {
  const started = now();
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    await Promise.race([probe(controller.signal), deadline]);
    return { ok: true, latencyMs: Math.round(now() - started) };
  } catch (err) {
    return { ok: false, latencyMs: Math.round(now() - started), error: describeError(err) };
  } finally {
    clearTimeout(timer);
  }
}

/** A short, secret-free description of a probe failure. */
export function describeError(err: unknown): string {
  const message = err instanceof Error ? err.message || err.name : String(err);
  return maskCredentials(message).replace(/\s+/g, " ").trim().slice(0, 200) || "unknown error";
}

/** `scheme://user:password@host` → `scheme://***@host`, wherever it appears in a message. */
export function maskCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi, "$1***@");
}
