import type { TFleetStatus } from "@sluice/services/signals/pure";

const CLASS: Record<TFleetStatus, string> = {
  failed: "badge badge--bad",
  lagging: "badge badge--bad",
  paused: "badge badge--warn",
  stopped: "badge",
  "not started": "badge",
  running: "badge badge--ok",
  "caught up": "badge badge--ok",
};

export function StatusBadge({ status }: { status: TFleetStatus }) {
  return (
    <span className={CLASS[status]} data-testid="fleet-status">
      {status}
    </span>
  );
}
