"use client";
// The fleet: one row per pipeline (its serving version), and one for each other version still running,
// paused or failed (marked "not serving", linked to its own page), problems first, refreshed every 5 s while
// the tab is visible (TanStack Query pauses interval refetches in a hidden tab). Filter by team and
// status, search by name, sort by any column. Every number comes from fleet.list (findFleet).
import { useQuery } from "@tanstack/react-query";
import type { TFleetRow } from "@sluice/services";
import {
  FLEET_STATUSES,
  fleetHeadline,
  STATUS_ORDER,
  type TFleetStatus,
} from "@sluice/services/signals/pure";
import Link from "next/link";
import { rolloutBadgeClass } from "@/components/rollout-badge";
import { useMemo, useState } from "react";
import { formatMs, formatValue } from "@/lib/format";
import { Since } from "@/components/since";
import { RateSparkline } from "@/charts/sparkline";
import { EmptyState } from "@/components/empty-state";
import { FilterSelect } from "@/components/filter-select";
import { useTRPC } from "@/trpc/react";
import { FiringAlerts, LifecycleActions } from "./fleet-slots";
import { StatusBadge } from "./status-badge";

const REFRESH_MS = 5_000;

type TSortKey =
  | "name"
  | "status"
  | "owner"
  | "inputRate"
  | "processingRate"
  | "backlog"
  | "backlogSeconds"
  | "freshness"
  | "violationRate"
  | "deadLetters";
const SORT_VALUE: Record<TSortKey, (r: TFleetRow) => number | string | null> = {
  name: (r) => r.name,
  status: (r) => STATUS_ORDER[r.status],
  owner: (r) => r.ownerTeam.name,
  inputRate: (r) => r.inputRate,
  processingRate: (r) => r.processingRate,
  backlog: (r) => r.backlog,
  // "Not draining" sorts as the worst.
  backlogSeconds: (r) =>
    r.backlog && r.backlog > 0 && r.backlogSeconds === null ? Number.POSITIVE_INFINITY : r.backlogSeconds,
  freshness: (r) => r.freshness.ingestAgeMs,
  violationRate: (r) => r.violationRate,
  deadLetters: (r) => r.deadLettersLastHour,
};

function compare(a: number | string | null, b: number | string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return typeof a === "string" ? a.localeCompare(String(b)) : a - (b as number);
}

export function FleetTable() {
  const trpc = useTRPC();
  const fleet = useQuery({ ...trpc.fleet.list.queryOptions(), refetchInterval: REFRESH_MS });
  // The same query (and cache) the rows' alert badges read.
  const firing = useQuery({ ...trpc.alert.firingByPipeline.queryOptions(), refetchInterval: REFRESH_MS });
  const [team, setTeam] = useState("");
  const [status, setStatus] = useState<TFleetStatus | "">("");
  const [search, setSearch] = useState("");
  const [sort, setSort] = useState<{ key: TSortKey; desc: boolean }>({ key: "status", desc: false });

  const rows = useMemo(() => {
    const all = fleet.data ?? [];
    const q = search.trim().toLowerCase();
    const kept = all.filter(
      (r) =>
        (!team || r.ownerTeam.slug === team) &&
        (!status || r.status === status) &&
        (!q || r.name.toLowerCase().includes(q)),
    );
    const value = SORT_VALUE[sort.key];
    return [...kept].sort(
      (a, b) =>
        (sort.desc ? -1 : 1) * compare(value(a), value(b)) ||
        compare(STATUS_ORDER[a.status], STATUS_ORDER[b.status]) ||
        a.name.localeCompare(b.name),
    );
  }, [fleet.data, team, status, search, sort]);

  if (fleet.isPending) return <p className="muted">Loading the fleet…</p>;
  if (fleet.isError)
    return (
      <p className="form__error" role="alert" data-testid="fleet-error">
        Could not load the fleet — these are not zeros, the numbers are unknown: {fleet.error.message}
      </p>
    );
  if (fleet.data.length === 0)
    return (
      <EmptyState
        title="No pipelines yet"
        next={
          <>
            Register and start one from a spec file:{" "}
            <code>npx sluice start &lt;spec.yaml&gt; &quot;first deploy&quot;</code>.
          </>
        }
      >
        A pipeline is a versioned spec: a Kafka source, a contract, expectations, windows and a sink. Once
        registered it appears here with its status, rates, backlog and freshness.
      </EmptyState>
    );

  const teams = [...new Map(fleet.data.map((r) => [r.ownerTeam.slug, r.ownerTeam.name])).entries()];
  // Alerts that could not be loaded are unknown, not none: the headline then never says healthy.
  const headline = fleetHeadline(fleet.data, firing.data ?? [], { alertsUnknown: firing.isError });
  const header = (key: TSortKey, label: string, className?: string) => (
    <th
      className={className}
      aria-sort={sort.key === key ? (sort.desc ? "descending" : "ascending") : "none"}
    >
      <button
        type="button"
        className="sort"
        onClick={() => setSort((s) => ({ key, desc: s.key === key ? !s.desc : false }))}
      >
        {label}
        {sort.key === key ? (sort.desc ? " ▼" : " ▲") : ""}
      </button>
    </th>
  );

  return (
    <section className="panel" data-testid="fleet">
      <div className="fleet__head">
        <h2 className="panel__title">
          Fleet{" "}
          <span className={`badge badge--${headline.tone}`} data-testid="fleet-problems">
            {firing.isPending ? "checking alerts…" : headline.text}
          </span>
        </h2>
        <div className="filters">
          <FilterSelect
            label="Team"
            value={team}
            onChange={setTeam}
            options={teams}
            ariaLabel="Filter by team"
          />
          <FilterSelect
            label="Status"
            value={status}
            onChange={setStatus}
            options={FLEET_STATUSES}
            ariaLabel="Filter by status"
          />
          <input
            type="search"
            placeholder="Search pipelines"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
            aria-label="Search pipelines by name"
          />
        </div>
      </div>
      <p className="muted small">
        Input (grey: events arriving on the topic) vs processing (line: rows committed), per minute over the
        last hour. Backlog: events not yet committed, and how long they take to drain at the last 2
        minutes&apos; rate (paused, stopped or failed: not draining). Freshness: age of the newest committed
        row (Kafka append time).
        {fleet.isRefetchError ? (
          <span className="bad"> Refresh failed — showing the last good answer.</span>
        ) : null}
      </p>
      <table className="table fleet" data-testid="fleet-table">
        <thead>
          <tr>
            {header("name", "Pipeline")}
            {header("status", "Status")}
            {header("owner", "Owner")}
            {header("inputRate", "Input vs processing, 1 h")}
            {header("backlog", "Backlog", "num")}
            {header("backlogSeconds", "Drains in", "num")}
            {header("freshness", "Freshness", "num")}
            {header("violationRate", "Violations", "num")}
            {header("deadLetters", "Dead letters 1 h", "num")}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <FleetRow key={`${r.name}@${r.version ?? "-"}`} row={r} />
          ))}
        </tbody>
      </table>
      {rows.length === 0 ? <p className="muted">No pipeline matches these filters.</p> : null}
    </section>
  );
}

function FleetRow({ row: r }: { row: TFleetRow }) {
  const stale =
    r.freshness.ingestAgeMs !== null &&
    r.freshness.ingestAgeMs > r.freshness.targetMs &&
    (r.backlog ?? 0) > 0;
  const violating = r.violationRate !== null && r.violationRate > r.violationTarget;
  return (
    <tr
      data-testid={r.serving ? `fleet-row-${r.name}` : `fleet-row-${r.name}-v${r.version}`}
      data-status={r.status}
      className={r.status === "failed" || r.status === "lagging" ? "row--problem" : undefined}
    >
      <td>
        <Link
          className="strong mono"
          href={`/pipelines/${encodeURIComponent(r.name)}${r.serving ? "" : `?v=${r.version}`}`}
        >
          {r.name}
        </Link>{" "}
        <span className="muted small">{r.version === null ? "no version" : `v${r.version}`}</span>
        {r.serving ? null : (
          <span
            className="badge badge--warn"
            data-testid="fleet-not-serving"
            title="Another version serves this pipeline; this one still runs on its own checkpoint (stop it on its page if it should not)"
          >
            not serving
          </span>
        )}
        {r.rollout ? (
          <div className="small">
            <Link
              href={`/pipelines/${encodeURIComponent(r.name)}/rollout`}
              className={rolloutBadgeClass(r.rollout.phase)}
              data-testid="fleet-rollout"
              title={`Rollout #${r.rollout.id}: v${r.rollout.greenVersion} (green) runs beside the serving version`}
            >
              rollout to v{r.rollout.greenVersion}: {r.rollout.label}
            </Link>
          </div>
        ) : null}
      </td>
      <td>
        <StatusBadge status={r.status} />
        {r.phase && r.status === "lagging" ? <span className="muted small"> ({r.phase})</span> : null}
        {r.since ? (
          <span className="muted small" title={r.since.toISOString()}>
            {" "}
            since <Since at={r.since} />
          </span>
        ) : null}
        {r.serving ? <FiringAlerts pipeline={r.name} placement="fleet-row" /> : null}
        {r.reason ? (
          <div
            className={`small ${r.status === "failed" || r.status === "lagging" ? "bad" : "muted"}`}
            data-testid="fleet-reason"
          >
            {r.reason}
          </div>
        ) : null}
        <LifecycleActions pipeline={r.name} version={r.version} placement="fleet-row" />
      </td>
      <td>{r.ownerTeam.name}</td>
      <td>
        {r.sparkline.processing.some((v) => v > 0) || r.sparkline.input.some((v) => v !== null) ? (
          <div className="spark-cell">
            <RateSparkline
              t={r.sparkline.t}
              input={r.sparkline.input}
              processing={r.sparkline.processing}
              label={`${r.name}: input vs processing rate, last hour`}
            />
            <span className="small mono" data-testid="fleet-rates">
              {formatValue(r.inputRate, "rate")} in
              <br />
              {formatValue(r.processingRate, "rate")} out
            </span>
          </div>
        ) : (
          <span className="muted small">no input or batches in the last hour</span>
        )}
      </td>
      <td className="num mono" data-testid="fleet-backlog">
        {formatValue(r.backlog, "count")}
      </td>
      <td className="num mono">
        {r.backlog && r.backlog > 0 && r.backlogSeconds === null ? (
          <span className="bad">not draining</span>
        ) : r.backlogSeconds === null ? (
          "—"
        ) : (
          formatMs(r.backlogSeconds * 1000)
        )}
      </td>
      <td
        className={`num mono${stale ? " bad" : ""}`}
        title={`target ${formatMs(r.freshness.targetMs)}; event time ${r.freshness.eventTimeAgeMs === null ? "—" : formatMs(r.freshness.eventTimeAgeMs)} old`}
      >
        {r.freshness.ingestAgeMs === null ? "—" : formatMs(r.freshness.ingestAgeMs)}
      </td>
      <td
        className={`num mono${violating ? " bad" : ""}`}
        title={`target ≤ ${formatValue(r.violationTarget, "share")} of input rows (last hour)`}
      >
        {formatValue(r.violationRate, "share")}
      </td>
      <td className={`num mono${r.deadLettersLastHour > 0 ? " warn" : ""}`}>
        {formatValue(r.deadLettersLastHour, "count", true)}
      </td>
    </tr>
  );
}
