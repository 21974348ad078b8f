"use client";
// One pipeline's rollout (rollout.get): blue and green side by side — their runs, how far green has
// caught up, both versions on the same charts (signals.series per version over one range), what
// changed in the spec (draft.diff), the newest reconciliation, and the step that comes next.
import { useQuery } from "@tanstack/react-query";
import type { TRolloutPage, TRolloutSide } from "@sluice/services";
import Link from "next/link";
import { BLUE, GREEN, RolloutCharts } from "@/charts/rollout-charts";
import { EmptyState } from "@/components/empty-state";
import { rolloutBadgeClass } from "@/components/rollout-badge";
import { Time } from "@/components/time";
import { formatValue } from "@/lib/format";
import { useTRPC } from "@/trpc/react";
import { Reconciliations } from "./reconciliations";
import { RolloutActions } from "./rollout-actions";

const REFRESH_MS = 5_000;
const CHART_RANGE_MS = 3600_000;

const STATE_TEXT: Record<TRolloutPage["rollout"]["state"], string> = {
  running: "running",
  promoted: "promoted",
  rolled_back: "rolled back",
  aborted: "aborted",
};

function fromText(f: TRolloutPage["rollout"]["startingFrom"]): string {
  if (f.kind === "timestamp") return `from ${f.at ?? "a point in time"}`;
  if (f.kind === "blue") return "from blue's own starting offsets";
  return "from the topic's earliest offsets";
}

function SideCard({
  name,
  side,
  role,
  color,
}: {
  name: string;
  side: TRolloutSide;
  role: "blue" | "green";
  color: string;
}) {
  const offsets = Object.entries(side.committedOffsets)
    .map(([p, o]) => `${p}:${o}`)
    .join(" ");
  return (
    <section className="panel rollout-side" style={{ borderTopColor: color }} data-testid={`rollout-${role}`}>
      <h3>
        {role} · v{side.version} {side.serving ? <span className="badge badge--ok">serving</span> : null}
      </h3>
      <dl className="facts">
        <dt>Run</dt>
        <dd data-testid={`rollout-${role}-status`}>{side.status}</dd>
        <dt>Last batch</dt>
        <dd>
          {side.lastBatchId >= 0 ? `#${side.lastBatchId}` : "none yet"}
          {side.lastCommitAt ? (
            <>
              {" "}
              at <Time value={side.lastCommitAt} />
            </>
          ) : null}
        </dd>
        <dt>Committed offsets</dt>
        <dd className="mono small" data-testid={`rollout-${role}-offsets`}>
          {offsets || "none"}
        </dd>
        <dt>State rows</dt>
        <dd>{formatValue(side.stateRows, "count")}</dd>
        <dt>Tables</dt>
        <dd className="mono small">
          {Object.entries(side.tables)
            .map(([serving, physical]) => `${serving} → sluice_sinks."${physical}"`)
            .join(", ") || "none"}
        </dd>
      </dl>
      {side.lastError ? <p className="form__error small">{side.lastError}</p> : null}
      <p className="small">
        <Link href={`/pipelines/${encodeURIComponent(name)}?v=${side.version}`}>
          Open version {side.version}&apos;s page
        </Link>{" "}
        (its batches, dead letters and lifecycle buttons)
      </p>
    </section>
  );
}

export function RolloutView({ name }: { name: string }) {
  const trpc = useTRPC();
  const rollout = useQuery({
    ...trpc.rollout.get.queryOptions({ pipeline: name }),
    refetchInterval: REFRESH_MS,
  });
  // One explicit range for both versions' series, so their buckets line up; it moves with each refresh
  // of the rollout (on a 10-second grain, so the charts refetch at most that often).
  const to = Math.floor(rollout.dataUpdatedAt / 10_000) * 10_000;
  const range = { from: new Date(to - CHART_RANGE_MS), to: new Date(to) };
  const r = rollout.data;
  const blueSeries = useQuery({
    ...trpc.signals.series.queryOptions({ pipeline: name, version: r?.blue.version, range }),
    enabled: Boolean(r),
  });
  const greenSeries = useQuery({
    ...trpc.signals.series.queryOptions({ pipeline: name, version: r?.green.version, range }),
    enabled: Boolean(r),
  });
  const diff = useQuery({
    ...trpc.draft.diff.queryOptions({
      pipeline: name,
      from: r?.blue.version ?? 1,
      to: r?.green.version ?? 1,
    }),
    enabled: Boolean(r),
  });

  if (rollout.isPending) return <p className="muted">Loading the rollout…</p>;
  if (rollout.isError)
    return (
      <p className="form__error" role="alert">
        Could not load the rollout: {rollout.error.message}
      </p>
    );
  if (!r)
    return (
      <EmptyState
        title="No rollout yet"
        next={
          <>
            Start one from the pipeline&apos;s{" "}
            <Link href={`/pipelines/${encodeURIComponent(name)}/edit`}>edit page</Link> (Register panel →{" "}
            <em>Start as a rollout</em>), or with{" "}
            <code>npx sluice rollout start &lt;spec.yaml&gt; &quot;why&quot;</code>.
          </>
        }
      >
        <p>
          <span className="mono">{name}</span> has never had a new version run beside its serving one.
        </p>
      </EmptyState>
    );

  const p = r.progress;
  return (
    <div className="stack" data-testid="rollout-view" data-phase={r.phase}>
      <section className="panel">
        <h2>
          Rollout #{String(r.rollout.id)}: v{r.blue.version} → v{r.green.version}{" "}
          <span className={rolloutBadgeClass(r.phase)} data-testid="rollout-label">
            {r.label}
          </span>
        </h2>
        <p className="small">
          {STATE_TEXT[r.rollout.state]} · started by {r.rollout.startedBy}{" "}
          <Time value={r.rollout.startedAt} /> {fromText(r.rollout.startingFrom)} · “{r.rollout.reason}”
          {r.rollout.decidedBy ? (
            <>
              {" "}
              · decided by {r.rollout.decidedBy}
              {r.rollout.decidedAt ? (
                <>
                  {" "}
                  <Time value={r.rollout.decidedAt} />
                </>
              ) : null}
              {r.rollout.decisionReason ? ` (“${r.rollout.decisionReason}”)` : ""}
            </>
          ) : null}
        </p>
        <KeptSide rollout={r} />
        {r.rollout.startingFrom.warnings.map((w) => (
          <p key={w} className="warn small">
            {w}
          </p>
        ))}
        {r.rollout.state === "running" ? (
          <div className="rollout-progress" data-testid="rollout-progress">
            <progress max={100} value={p.percent} aria-label="green caught up" />{" "}
            <span className="small">
              green has committed {formatValue(p.greenRead, "count")} of the{" "}
              {formatValue(p.blueRead, "count")} offsets blue committed since green&apos;s start ({p.percent}
              %)
            </span>
          </div>
        ) : null}
        {r.promotion ? (
          <p className="small" data-testid="rollout-promotion">
            Promotion:{" "}
            <Link href={`/change-requests?id=${String(r.promotion.id)}`}>
              change request #{String(r.promotion.id)}
            </Link>{" "}
            by {r.promotion.requestedBy}, {r.promotion.status}.
          </p>
        ) : null}
        <RolloutActions rollout={r} />
      </section>

      <div className="rollout-sides">
        <SideCard name={name} side={r.blue} role="blue" color={BLUE} />
        <SideCard name={name} side={r.green} role="green" color={GREEN} />
      </div>

      <Reconciliations rollout={r} />

      <section className="panel">
        <h2>Both versions, last hour</h2>
        {blueSeries.data && greenSeries.data ? (
          <RolloutCharts
            blue={blueSeries.data}
            green={greenSeries.data}
            versions={{ blue: r.blue.version, green: r.green.version }}
          />
        ) : (
          <p className="muted">Loading the charts…</p>
        )}
      </section>

      <section className="panel" data-testid="rollout-spec-diff">
        <h2>
          What changed from v{r.blue.version} to v{r.green.version}
        </h2>
        {diff.data ? (
          diff.data.changes.length === 0 ? (
            <p className="muted">The two specs are the same.</p>
          ) : (
            <table className="table table--compact">
              <thead>
                <tr>
                  <th>setting</th>
                  <th>v{r.blue.version} (blue)</th>
                  <th>v{r.green.version} (green)</th>
                </tr>
              </thead>
              <tbody>
                {diff.data.changes.map((c) => (
                  <tr key={c.path}>
                    <td className="mono small">{c.path}</td>
                    <td className="mono small diff-before">
                      {c.before === undefined ? "—" : JSON.stringify(c.before)}
                    </td>
                    <td className="mono small diff-after">
                      {c.after === undefined ? "—" : JSON.stringify(c.after)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        ) : (
          <p className="muted">Loading the spec diff…</p>
        )}
      </section>
    </div>
  );
}

/** After a promotion or rollback: how long the side that stopped keeps what undoing it needs. */
function KeptSide({ rollout: r }: { rollout: TRolloutPage }) {
  const { state, keptUntil, previousDroppedAt, keepPreviousHours } = r.rollout;
  if (state !== "promoted" && state !== "rolled_back") return null;
  const kept = state === "promoted" ? r.blue.version : r.green.version;
  return (
    <p className="small" data-testid="rollout-kept">
      {previousDroppedAt ? (
        <>
          Version {kept}&apos;s state and tables were dropped <Time value={previousDroppedAt} />,{" "}
          {keepPreviousHours} hours after the {state === "promoted" ? "promotion" : "rollback"}
          {state === "promoted" ? ": it can no longer be rolled back to." : "."}
        </>
      ) : (
        <>
          Version {kept} keeps its state and tables until {keptUntil ? <Time value={keptUntil} /> : "?"} (
          {keepPreviousHours} hours after the {state === "promoted" ? "promotion" : "rollback"})
          {state === "promoted" ? ": roll back before then." : "; then they are dropped."}
        </>
      )}
    </p>
  );
}
