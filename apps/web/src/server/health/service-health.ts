// The health report for /api/health and the console's status indicator. Concurrent callers share
// one run, and a report is reused for a second, so a busy load balancer cannot multiply connections.
import "server-only";
import { runHealthChecks, type THealthReport } from "@sluice/services";
import { db } from "../db";
import { webEnv } from "../env";
import { kafkaProbe, postgresProbe, redisProbe } from "./service-probes";

export type TServiceName = "postgres" | "redis" | "kafka";
export type TServiceHealth = THealthReport<TServiceName> & { checkedAt: Date };

const REUSE_MS = 1000;
let last: { at: number; report: Promise<TServiceHealth> } | undefined;

export function checkServiceHealth(): Promise<TServiceHealth> {
  const now = Date.now();
  if (last && now - last.at < REUSE_MS) return last.report;
  const env = webEnv();
  const report = runHealthChecks<TServiceName>(
    {
      postgres: postgresProbe(db()),
      redis: redisProbe(env.REDIS_URL),
      kafka: kafkaProbe(env.KAFKA_BROKERS),
    },
    { timeoutMs: 2000 },
  ).then((r) => ({ ...r, checkedAt: new Date() }));
  last = { at: now, report };
  return report;
}
