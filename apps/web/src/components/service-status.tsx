"use client";
// The services Sluice depends on, refreshed every 15 s. Each is shown separately: a down Kafka and a
// down Postgres call for different people.
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";

const LABELS = { postgres: "Postgres", redis: "Redis", kafka: "Kafka" } as const;

export function ServiceStatus() {
  const trpc = useTRPC();
  const health = useQuery(
    trpc.health.get.queryOptions(undefined, { refetchInterval: 15_000, staleTime: 5_000 }),
  );
  if (!health.data) {
    return (
      <div className="status" data-testid="service-status">
        <div className="status__title">
          <span className="dot dot--unknown" /> {health.isError ? "Status unavailable" : "Checking services…"}
        </div>
      </div>
    );
  }
  const { status, checks, checkedAt } = health.data;
  return (
    <div className="status" data-testid="service-status" title={`Checked ${checkedAt.toLocaleTimeString()}`}>
      <div className="status__title">
        <span className={`dot dot--${status === "ok" ? "ok" : "bad"}`} />
        {status === "ok" ? "All services up" : "Degraded"}
      </div>
      <ul className="status__checks">
        {(Object.keys(LABELS) as (keyof typeof LABELS)[]).map((name) => {
          const check = checks[name];
          return (
            <li key={name} title={check.error}>
              <span className={`dot dot--${check.ok ? "ok" : "bad"}`} />
              <span>{LABELS[name]}</span>
              <span className="muted num">{check.ok ? `${check.latencyMs} ms` : "down"}</span>
            </li>
          );
        })}
      </ul>
    </div>
  );
}
