// A rollout's phase as a badge, the same on the fleet and the rollout page: red when green failed or
// differs from blue, green when it is ready to promote, amber while anything is still to happen.
import type { TRolloutPhase } from "@sluice/services";

export function rolloutBadgeClass(phase: TRolloutPhase): string {
  if (phase === "differences" || phase === "green_failed" || phase === "not_comparable")
    return "badge badge--bad";
  if (phase === "ready" || phase === "promoted") return "badge badge--ok";
  return "badge badge--warn";
}
