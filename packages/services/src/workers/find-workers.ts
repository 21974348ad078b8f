// Worker processes for the console: alive ones first, and recently stopped or dead ones.
import type { PrismaClient } from "@sluice/db";
import { WORKER_HEARTBEAT_TIMEOUT_MS } from "../runs/run-record";

export interface TWorkerSummary {
  id: string;
  host: string;
  pid: number;
  queue: string;
  concurrency: number;
  activeJobs: number;
  startedAt: Date;
  lastHeartbeatAt: Date;
  stoppedAt: Date | null;
  state: "alive" | "stopped" | "dead";
}

export async function findWorkers(db: PrismaClient, opts: { since?: Date } = {}): Promise<TWorkerSummary[]> {
  const since = opts.since ?? new Date(Date.now() - 24 * 3600_000);
  const rows = await db.worker.findMany({
    where: { lastHeartbeatAt: { gte: since } },
    orderBy: [{ lastHeartbeatAt: "desc" }],
  });
  const now = Date.now();
  return rows
    .map((w) => ({
      ...w,
      state: (w.stoppedAt
        ? "stopped"
        : now - w.lastHeartbeatAt.getTime() < WORKER_HEARTBEAT_TIMEOUT_MS
          ? "alive"
          : "dead") as TWorkerSummary["state"],
    }))
    .sort((a, b) => (a.state === b.state ? 0 : a.state === "alive" ? -1 : b.state === "alive" ? 1 : 0));
}
