// The worker's entry in the worker registry (table `workers`), refreshed every interval, plus the
// housekeeping that rides on the same timer: closing idle warm runners, and dropping the gauges of
// versions whose lease another worker holds now.
import type { PrismaClient } from "@sluice/db";
import { recordWorkerHeartbeat, type TWorkerIdentity } from "@sluice/services";
import type { Logger } from "../logger";

export interface Heartbeat {
  beat(): Promise<void>;
  stop(): void;
}

export function startHeartbeat(opts: {
  db: PrismaClient;
  identity: TWorkerIdentity;
  intervalMs: number;
  activeJobs: () => number;
  logger: Logger;
  onBeat?: () => Promise<void>;
}): Heartbeat {
  let stopped = false;
  const beat = async () => {
    await recordWorkerHeartbeat(opts.db, opts.identity, opts.activeJobs());
    await opts.onBeat?.();
  };
  const timer = setInterval(() => {
    if (stopped) return;
    beat().catch((err) => opts.logger.warn({ err }, "heartbeat failed"));
  }, opts.intervalMs);
  timer.unref();
  return {
    beat,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
