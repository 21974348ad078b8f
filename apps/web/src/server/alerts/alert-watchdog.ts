// The console's alert watchdog: "no worker alive" is the one rule a worker cannot evaluate (the
// workers' evaluator is exactly what is gone), so every console process runs this loop. It uses the
// same evaluation as the workers under a lease of its own ("watchdog"), so several console instances
// evaluate it once, and delivers its own notifications (the workers may all be down).
import "server-only";
import { hostname } from "node:os";
import { pipelineEnv, smtpOptions } from "@sluice/config";
import { deliverAlertNotifications, runAlertEvaluation } from "@sluice/services";
import { db } from "../db";
import { webEnv } from "../env";
import { logger } from "../logger";
import { consoleOrigins } from "../web-env";

const KINDS = ["no_worker_alive"] as const;
const holder = globalThis as typeof globalThis & { __sluiceWatchdog?: NodeJS.Timeout };

export function startAlertWatchdog(): void {
  const env = webEnv();
  const intervalMs = env.SLUICE_ALERT_WATCHDOG_INTERVAL_MS;
  if (intervalMs === 0 || holder.__sluiceWatchdog) return;
  const owner = `console:${hostname()}:${process.pid}`;
  const log = logger().child({ component: "alert-watchdog" });
  const publicUrl = consoleOrigins(env).publicUrl;
  const tick = async () => {
    const result = await runAlertEvaluation(db(), {
      evaluator: "watchdog",
      owner,
      leaseMs: Math.max(3 * intervalMs, 5000),
      kinds: KINDS,
    });
    if (!result.evaluated) return;
    if (result.opened || result.resolved)
      log.warn({ opened: result.opened, resolved: result.resolved }, "no-worker-alive alert changed");
    await deliverAlertNotifications(db(), {
      env: pipelineEnv(),
      publicUrl,
      smtp: smtpOptions(env),
      ruleKinds: KINDS,
    });
  };
  const loop = () => {
    holder.__sluiceWatchdog = setTimeout(() => {
      tick()
        .catch((err) =>
          log.warn(
            { err: err instanceof Error ? err.message : String(err) },
            "alert watchdog tick failed; retrying next interval",
          ),
        )
        .finally(loop);
    }, intervalMs);
    holder.__sluiceWatchdog.unref();
  };
  loop();
}
