"use client";
// The Alerts page: firing, acknowledged and recently resolved alerts across the fleet, problems first,
// filtered by team, severity and pipeline, refreshed every 5 s; and the latest notifications with
// their delivery state (delivered, retrying with the receiver's error, failed).
import { useQuery } from "@tanstack/react-query";
import { SEVERITIES } from "@sluice/services/alerts/pure";
import { useState } from "react";
import { EmptyState } from "@/components/empty-state";
import { FilterSelect } from "@/components/filter-select";
import { useTRPC } from "@/trpc/react";
import { AlertRow } from "./alert-row";

const REFRESH_MS = 5_000;

export function AlertsView({
  canRespond,
  initialPipeline = "",
}: {
  canRespond: boolean;
  initialPipeline?: string;
}) {
  const trpc = useTRPC();
  const [team, setTeam] = useState("");
  const [severity, setSeverity] = useState<(typeof SEVERITIES)[number] | "">("");
  const [pipeline, setPipeline] = useState(initialPipeline);
  const teams = useQuery(trpc.team.list.queryOptions());
  const alerts = useQuery({
    ...trpc.alert.list.queryOptions({
      ...(team ? { team } : {}),
      ...(severity ? { severity } : {}),
      ...(pipeline.trim() ? { pipeline: pipeline.trim() } : {}),
    }),
    refetchInterval: REFRESH_MS,
  });
  const notifications = useQuery({ ...trpc.alert.notifications.queryOptions(), refetchInterval: REFRESH_MS });
  const filtered = Boolean(team || severity || pipeline.trim());
  const open = alerts.data?.filter((a) => a.state !== "resolved").length ?? 0;

  return (
    <div className="stack">
      <section className="panel" data-testid="alerts">
        <div className="fleet__head">
          <h2 className="panel__title">
            Alerts{" "}
            <span className={open > 0 ? "badge badge--bad" : "badge badge--ok"} data-testid="alerts-open">
              {open > 0 ? `${open} open` : "none open"}
            </span>
          </h2>
          <div className="filters">
            <FilterSelect
              label="Team"
              value={team}
              onChange={setTeam}
              options={(teams.data ?? []).map((t) => [t.slug, t.name] as const)}
              ariaLabel="Filter by team"
            />
            <FilterSelect
              label="Severity"
              value={severity}
              onChange={setSeverity}
              options={SEVERITIES}
              ariaLabel="Filter by severity"
            />
            <input
              type="search"
              placeholder="Pipeline"
              value={pipeline}
              onChange={(e) => setPipeline(e.target.value)}
              aria-label="Filter by pipeline"
            />
          </div>
        </div>
        {alerts.isPending ? (
          <p className="muted">Loading alerts…</p>
        ) : alerts.isError ? (
          <p className="form__error" role="alert">
            Could not load alerts — this is not “no alerts”: {alerts.error.message}
          </p>
        ) : alerts.data.length === 0 ? (
          filtered ? (
            <p className="muted">No alert matches these filters.</p>
          ) : (
            <EmptyState
              title="Nothing firing"
              next={
                <>
                  Tune a pipeline&apos;s rules on its page (Alerts section), and make sure its team has an
                  on-call webhook (Admin → Teams).
                </>
              }
            >
              <p>
                Every pipeline has default rules — backlog growing while input is steady, processing below
                input, freshness over target, violations and dead letters over a threshold, failing batches,
                state growing, webhook deliveries failing, no batch while running — and the fleet has worker
                rules. None has fired in the last 24 hours.
              </p>
            </EmptyState>
          )
        ) : (
          <ul className="alerts" data-testid="alerts-list">
            {alerts.data.map((a) => (
              <AlertRow key={a.id} alert={a} canRespond={canRespond} />
            ))}
          </ul>
        )}
      </section>

      <section className="panel" data-testid="alert-notifications">
        <h2 className="panel__title">Notifications</h2>
        <p className="muted small">
          What was sent to each team&apos;s contact points (Admin → Teams): one notification when an alert
          fires, one when it is acknowledged, one when it resolves, and a reminder only while it stays
          unacknowledged. A receiver that is down is retried with backoff; one that refuses the request itself
          is not. Its answer is shown here.
        </p>
        {notifications.isPending ? (
          <p className="muted">Loading notifications…</p>
        ) : notifications.isError ? (
          <p className="form__error" role="alert">
            Could not load notifications: {notifications.error.message}
          </p>
        ) : notifications.data.length === 0 ? (
          <p className="muted">No notifications sent yet.</p>
        ) : (
          <table className="table">
            <thead>
              <tr>
                <th>Alert</th>
                <th>Kind</th>
                <th>Team</th>
                <th>To</th>
                <th>Status</th>
                <th className="num">Attempts</th>
                <th>Last answer</th>
              </tr>
            </thead>
            <tbody>
              {notifications.data.map((n) => (
                <tr key={n.id} data-testid={`notification-${n.id}`}>
                  <td className="mono">{n.alertId ? `#${n.alertId}` : "test"}</td>
                  <td>{n.kind}</td>
                  <td>{n.team}</td>
                  <td className="small">{n.to ?? "nobody"}</td>
                  <td
                    className={
                      n.status === "failed"
                        ? "bad"
                        : n.status === "pending" && n.lastError
                          ? "warn"
                          : undefined
                    }
                  >
                    {n.status}
                  </td>
                  <td className="num">{n.attempts}</td>
                  <td className="small wrap-anywhere">
                    {n.lastError ?? (n.lastStatusCode ? `HTTP ${n.lastStatusCode}` : "—")}
                    {n.lastResponse && n.status !== "delivered" ? (
                      <div className="mono muted">The receiver said: {n.lastResponse}</div>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
