// Where later issues plug into the fleet row and the pipeline page header, so they add a component
// here instead of reworking those views:
//  - FiringAlerts: the alerts issue renders the pipeline's firing alerts (count and worst severity) in the
//    fleet row's status cell and in the pipeline header, evaluated over the same @sluice/services signals.
//  - LifecycleActions: start / pause / resume / stop / restart with a reason, in the pipeline header
//    (lifecycle-actions.tsx); the fleet row stays read-only (one click away on the pipeline page).
// FiringAlerts renders nothing until the alerts issue lands.
import { LifecycleActions as PipelineLifecycle } from "./lifecycle-actions";

export function FiringAlerts(_props: { pipeline: string; placement: "fleet-row" | "pipeline-header" }) {
  return null;
}

export function LifecycleActions(props: { pipeline: string; version: number | null; placement: "fleet-row" | "pipeline-header" }) {
  return props.placement === "pipeline-header" ? <PipelineLifecycle pipeline={props.pipeline} /> : null;
}
