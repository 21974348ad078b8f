// Prometheus metrics for one worker process, served on their own port so scraping never competes
// with batch work for the event loop of an HTTP framework.
import http from "node:http";
import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";

export interface WorkerMetrics {
  registry: Registry;
  jobsCompleted: Counter<"job">;
  jobsFailed: Counter<"job">;
  activeJobs: Gauge;
  heartbeats: Counter;
  lastHeartbeat: Gauge;
  warmRunners: Gauge;
  reconciled: Counter<"action">;
  alertEvaluations: Counter<"result">;
  alertNotifications: Counter<"outcome">;
}

export function createWorkerMetrics(): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "sluice_worker_" });
  return {
    registry,
    jobsCompleted: new Counter({
      name: "sluice_worker_jobs_completed_total",
      help: "Jobs this worker completed, by job name",
      labelNames: ["job"],
      registers: [registry],
    }),
    jobsFailed: new Counter({
      name: "sluice_worker_jobs_failed_total",
      help: "Jobs that threw in this worker, by job name",
      labelNames: ["job"],
      registers: [registry],
    }),
    activeJobs: new Gauge({
      name: "sluice_worker_active_jobs",
      help: "Jobs running in this worker now",
      registers: [registry],
    }),
    heartbeats: new Counter({
      name: "sluice_worker_heartbeats_total",
      help: "Heartbeats this worker wrote to the worker registry (table workers)",
      registers: [registry],
    }),
    lastHeartbeat: new Gauge({
      name: "sluice_worker_last_heartbeat_timestamp_seconds",
      help: "When this worker last wrote its heartbeat",
      registers: [registry],
    }),
    warmRunners: new Gauge({
      name: "sluice_worker_warm_runners",
      help: "Pipeline versions with a warm runner (Kafka consumer) in this worker",
      registers: [registry],
    }),
    reconciled: new Counter({
      name: "sluice_worker_reconciled_jobs_total",
      help: "Batch jobs the reconciler rebuilt from Postgres, by action (added, retried, replaced)",
      labelNames: ["action"],
      registers: [registry],
    }),
    alertEvaluations: new Counter({
      name: "sluice_worker_alert_evaluations_total",
      help: "Alert evaluation ticks this worker ran, by result (evaluated, fenced by a newer tick, not_lease_holder)",
      labelNames: ["result"],
      registers: [registry],
    }),
    alertNotifications: new Counter({
      name: "sluice_worker_alert_notifications_total",
      help: "Alert notification delivery attempts by outcome (delivered, retrying, failed)",
      labelNames: ["outcome"],
      registers: [registry],
    }),
  };
}

/** Serve GET /metrics on `host`. Port 0 picks a free port (tests); the bound port is returned. */
export async function serveMetrics(
  registry: Registry,
  port: number,
  host: string,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    if (req.url !== "/metrics") {
      res.writeHead(404).end("see /metrics\n");
      return;
    }
    res.writeHead(200, { "content-type": registry.contentType });
    res.end(await registry.metrics());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
