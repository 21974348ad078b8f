// Where later issues plug into the fleet row and the pipeline page header, so they add a component
// here instead of reworking those views:
//  - FiringAlerts: the alerts issue renders the pipeline's firing alerts (count and worst severity) in the
//    fleet row's status cell and in the pipeline header, evaluated over the same @sluice/services signals.
//  - LifecycleActions: the change-management issue renders pause / resume / stop / restart for operators
//    in the pipeline header (and, if wanted, the fleet row's last cell).
// Both render nothing until then.
export function FiringAlerts(_props: { pipeline: string; placement: "fleet-row" | "pipeline-header" }) {
  return null;
}

export function LifecycleActions(_props: { pipeline: string; version: number | null; placement: "fleet-row" | "pipeline-header" }) {
  return null;
}
