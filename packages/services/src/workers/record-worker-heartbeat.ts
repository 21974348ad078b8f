// The worker registry: each worker process registers itself on start, refreshes its heartbeat every
// few seconds and marks itself stopped on a clean shutdown. The console lists them; the run-state
// commands use the heartbeat to tell a batch in flight from one abandoned by a dead worker.
import type { PrismaClient } from "@sluice/db";

export interface TWorkerIdentity {
  id: string;
  host: string;
  pid: number;
  queue: string;
  concurrency: number;
}

export async function recordWorkerHeartbeat(
  db: PrismaClient,
  w: TWorkerIdentity,
  activeJobs: number,
): Promise<void> {
  const now = new Date();
  await db.worker.upsert({
    where: { id: w.id },
    create: { ...w, activeJobs, startedAt: now, lastHeartbeatAt: now },
    update: { activeJobs, lastHeartbeatAt: now },
  });
}

export async function markWorkerStopped(db: PrismaClient, id: string): Promise<void> {
  await db.worker.updateMany({ where: { id }, data: { stoppedAt: new Date(), activeJobs: 0 } });
}
