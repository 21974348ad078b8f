"use client";
// One alert as on-call reads it: state and severity, what fired where, since when, the value against
// the threshold, what the last evaluation saw, what to do (runbook), who acknowledged, and whether the
// team was told (the latest notification's delivery).
import type { TAlertView } from "@sluice/services";
import { formatRuleValue } from "@sluice/services/alerts/pure";
import Link from "next/link";
import { Since } from "@/components/since";
import { AlertActions } from "./alert-actions";

const STATE_CLASS = {
  firing: "badge badge--bad",
  acknowledged: "badge badge--warn",
  resolved: "badge badge--ok",
} as const;
const SEVERITY_CLASS = { critical: "badge badge--bad", warning: "badge badge--warn", info: "badge" } as const;

export function AlertRow({ alert: a, canRespond }: { alert: TAlertView; canRespond: boolean }) {
  return (
    <li
      className={`alert${a.state === "firing" ? " alert--firing" : ""}`}
      data-testid={`alert-${a.id}`}
      data-state={a.state}
      data-kind={a.kind}
      data-pipeline={a.pipeline ?? ""}
    >
      <div className="alert__head">
        <span className={STATE_CLASS[a.state]} data-testid="alert-state">
          {a.state}
        </span>{" "}
        <span className={SEVERITY_CLASS[a.severity]}>{a.severity}</span> <strong>{a.title}</strong> on{" "}
        {a.pipeline ? (
          <Link className="mono" href={`/pipelines/${encodeURIComponent(a.pipeline)}`}>
            {a.pipeline}
            {a.version !== null ? ` v${a.version}` : ""}
          </Link>
        ) : (
          <span>the fleet</span>
        )}
        {a.team ? (
          <span className="muted small">
            {" "}
            · {a.team.name}
            {a.team.onCallEmail ? <> (on-call {a.team.onCallEmail})</> : null}
          </span>
        ) : null}
        {a.silenced ? (
          <span className="badge" data-testid="alert-silenced">
            silenced
          </span>
        ) : null}
        <span className="muted small"> · #{a.id}</span>
      </div>
      <div className="small" data-testid="alert-summary">
        {a.summary}
      </div>
      <div className="small muted">
        since{" "}
        <span title={a.startedAt.toISOString()}>
          <Since at={a.startedAt} />
        </span>{" "}
        · value{" "}
        <span className="mono" data-testid="alert-value">
          {formatRuleValue(a.kind, a.value)}
        </span>{" "}
        vs threshold <span className="mono">{formatRuleValue(a.kind, a.threshold)}</span> ({a.unit})
        {a.acknowledgedBy ? (
          <>
            {" "}
            · acknowledged by <span data-testid="alert-acked-by">{a.acknowledgedBy}</span>
            {a.ackNote ? `: “${a.ackNote}”` : ""}
          </>
        ) : null}
        {a.resolvedAt ? (
          <>
            {" "}
            · resolved <Since at={a.resolvedAt} />{" "}
            {a.resolvedBy === "auto" ? "(condition cleared)" : `by ${a.resolvedBy}`}
          </>
        ) : null}
      </div>
      {a.deliveries.length > 0 ? (
        <ul className="deliveries" data-testid="alert-delivery">
          {a.deliveries.map((d, i) => (
            <li
              key={i}
              className={`small wrap-anywhere ${d.status === "failed" ? "bad" : d.status === "pending" && d.lastError ? "warn" : "muted"}`}
            >
              {d.kind} {d.to ? `to ${d.to}` : "notification"} {d.status}
              {d.status === "pending" && d.lastError ? ` (retrying after ${d.attempts} attempts)` : ""}
              {d.lastError && d.status !== "delivered" ? `: ${d.lastError}` : ""}
              {d.lastResponse && d.status !== "delivered" ? (
                <span className="mono"> — the receiver said: {d.lastResponse}</span>
              ) : null}
            </li>
          ))}
        </ul>
      ) : a.state !== "resolved" ? (
        <div className="small muted">{a.silenced ? "not notified: silenced" : "notification queued"}</div>
      ) : null}
      {a.state !== "resolved" ? <div className="small muted">Runbook: {a.runbook}</div> : null}
      <AlertActions alert={a} canRespond={canRespond} />
    </li>
  );
}
