"use client";
// On the pipeline page: the running (or last promoted) rollout in one line with a link to its page, so
// nobody changes a pipeline mid-rollout without seeing it. Nothing when there is none to act on.
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { rolloutBadgeClass } from "@/components/rollout-badge";
import { Time } from "@/components/time";
import { useTRPC } from "@/trpc/react";

export function RolloutBanner({ pipeline }: { pipeline: string }) {
  const trpc = useTRPC();
  const rollout = useQuery({ ...trpc.rollout.get.queryOptions({ pipeline }), refetchInterval: 10_000 });
  const r = rollout.data;
  // A promotion is shown while it can be rolled back: until blue's state and tables are dropped.
  if (
    !r ||
    !(r.rollout.state === "running" || (r.rollout.state === "promoted" && !r.rollout.previousDroppedAt))
  )
    return null;
  return (
    <p className="notice" data-testid="rollout-banner">
      {r.rollout.state === "running" ? (
        `Rollout #${String(r.rollout.id)}: v${r.green.version} (green) runs beside v${r.blue.version} (blue, serving). `
      ) : (
        <>
          Rollout #{String(r.rollout.id)} promoted v{r.green.version}; v{r.blue.version} is kept for a
          rollback until {r.rollout.keptUntil ? <Time value={r.rollout.keptUntil} /> : "?"}.{" "}
        </>
      )}
      <span className={rolloutBadgeClass(r.phase)}>{r.label}</span>{" "}
      <Link href={`/pipelines/${encodeURIComponent(pipeline)}/rollout`}>Open the rollout</Link>
    </p>
  );
}
