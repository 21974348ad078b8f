"use client";
// Where later issues plug into the fleet row and the pipeline page header, so they add a component
// here instead of reworking those views:
//  - FiringAlerts: the pipeline's unresolved alerts (count and worst severity), from one query for the
//    whole fleet (alert.firingByPipeline, shared by every row through the query cache).
//  - LifecycleActions: start / pause / resume / stop / restart with a reason, in the pipeline header,
//    on the version the page shows (lifecycle-actions.tsx); the fleet row stays read-only (one click
//    away on the pipeline page).
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "@/trpc/react";
import { LifecycleActions as PipelineLifecycle } from "./lifecycle-actions";

const REFRESH_MS = 5_000;

export function FiringAlerts({
  pipeline,
  placement,
}: {
  pipeline: string;
  placement: "fleet-row" | "pipeline-header";
}) {
  const trpc = useTRPC();
  const firing = useQuery({ ...trpc.alert.firingByPipeline.queryOptions(), refetchInterval: REFRESH_MS });
  const mine = firing.data?.find((f) => f.pipeline === pipeline);
  if (!mine) return null;
  const parts = [
    mine.firing > 0 ? `${mine.firing} firing` : null,
    mine.acknowledged > 0 ? `${mine.acknowledged} acknowledged` : null,
  ]
    .filter(Boolean)
    .join(", ");
  const cls = mine.firing > 0 && mine.worst === "critical" ? "badge badge--bad" : "badge badge--warn";
  return (
    <Link
      href={placement === "fleet-row" ? `/alerts?pipeline=${encodeURIComponent(pipeline)}` : "#alerts"}
      className={cls}
      data-testid={`firing-alerts-${placement}`}
      title={`worst: ${mine.worst}`}
    >
      {parts}
    </Link>
  );
}

export function LifecycleActions(props: {
  pipeline: string;
  version: number | null;
  placement: "fleet-row" | "pipeline-header";
}) {
  return props.placement === "pipeline-header" && props.version !== null ? (
    <PipelineLifecycle pipeline={props.pipeline} version={props.version} />
  ) : null;
}
