// Next.js calls register() once per server process at start (docs: instrumentation). The console's
// background work — the alert watchdog — starts here, in the Node.js runtime only.
import { isNodeRuntime } from "@sluice/config";

export async function register(): Promise<void> {
  if (!isNodeRuntime()) return;
  const { startAlertWatchdog } = await import("./server/alerts/alert-watchdog");
  startAlertWatchdog();
}
