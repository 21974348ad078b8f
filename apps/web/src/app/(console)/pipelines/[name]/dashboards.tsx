"use client";
// The pipeline's dashboards for one version and range: the three signals, the graph with its edge
// counts, every chart, and the checkpoint offsets. Live: refetched every 10 s while the tab is visible
// (a fixed range every 30 s). Each block has its own loading and error state — an unreachable Postgres
// says so instead of drawing zeros.
import { useQuery } from "@tanstack/react-query";
import type { TPipelineVersionSummary } from "@sluice/services";
import { FlowGraph } from "@/charts/flow-graph";
import { PipelineCharts } from "@/charts/pipeline-charts";
import { useTRPC } from "@/trpc/react";
import { OffsetsTable } from "./offsets-table";
import { RangeBar } from "./range-bar";
import { SignalPanels } from "./signal-panels";
import type { TRangeChoice } from "./use-dashboard-range";

const LIVE_MS = 10_000;
const FIXED_MS = 30_000;

function Failed({ what, error }: { what: string; error: { message: string } }) {
  return (
    <p className="form__error" role="alert" data-testid="dashboard-error">
      Could not load {what}: {error.message}. The numbers are unknown, not zero; this retries by itself.
    </p>
  );
}

export function Dashboards(props: {
  pipeline: string;
  version: number | undefined;
  versions: TPipelineVersionSummary[];
  range: TRangeChoice;
  setRange: (r: TRangeChoice) => void;
  notRunning: string | null;
}) {
  const trpc = useTRPC();
  const input = { pipeline: props.pipeline, version: props.version, range: props.range };
  const every = { refetchInterval: "preset" in props.range ? LIVE_MS : FIXED_MS };
  const signals = useQuery({
    ...trpc.signals.signals.queryOptions(input),
    ...every,
    placeholderData: (previous) => previous,
  });
  const series = useQuery({
    ...trpc.signals.series.queryOptions(input),
    ...every,
    placeholderData: (previous) => previous,
  });
  const offsets = useQuery({
    ...trpc.signals.offsets.queryOptions({ pipeline: props.pipeline, version: props.version }),
    refetchInterval: LIVE_MS,
  });
  const shown = props.versions.find((v) => (props.version ? v.version === props.version : v.serving));

  return (
    <div className="stack" data-testid="dashboards" data-version={shown?.version ?? ""}>
      {shown && !shown.serving ? (
        <p className="notice small" data-testid="version-notice">
          Showing version {shown.version}
          {shown.supersededBy ? `, superseded by version ${shown.supersededBy}` : ""} — not the serving
          version. Its charts, graph and offsets are its own.
        </p>
      ) : null}
      <RangeBar
        range={props.range}
        onChange={props.setRange}
        stepSeconds={series.data?.stepSeconds ?? null}
      />
      {signals.isPending ? (
        <p className="muted">Loading freshness, completeness and correctness…</p>
      ) : signals.isError ? (
        <Failed what="the signals" error={signals.error} />
      ) : (
        <SignalPanels signals={signals.data} />
      )}
      <section className="panel" data-testid="graph">
        <h2 className="panel__title">The pipeline as a graph</h2>
        <p className="muted small">
          Rows that took each edge in the selected range. The main line carries what is left after each phase;
          branches are where rows leave.
        </p>
        {signals.isPending ? (
          <p className="muted">Loading the graph…</p>
        ) : signals.isError ? (
          <Failed what="the graph" error={signals.error} />
        ) : (
          <FlowGraph flow={signals.data.flow} />
        )}
      </section>
      <section className="panel">
        <h2 className="panel__title">Over time</h2>
        {series.isPending ? (
          <p className="muted">Loading the charts…</p>
        ) : series.isError ? (
          <Failed what="the charts" error={series.error} />
        ) : (
          <PipelineCharts
            series={series.data}
            notRunning={props.notRunning}
            onZoom={(from, to) => props.setRange({ from, to })}
          />
        )}
      </section>
      {offsets.isPending ? (
        <p className="muted">Loading offsets…</p>
      ) : offsets.isError ? (
        <Failed what="the checkpoint offsets" error={offsets.error} />
      ) : (
        <OffsetsTable view={offsets.data} />
      )}
    </div>
  );
}

export function VersionSelect({
  versions,
  version,
  onChange,
}: {
  versions: TPipelineVersionSummary[];
  version: number | undefined;
  onChange: (v: number | undefined) => void;
}) {
  if (versions.length === 0) return null;
  const serving = versions.find((v) => v.serving)!;
  return (
    <label className="small">
      Version{" "}
      <select
        data-testid="version-select"
        value={version ?? serving.version}
        onChange={(e) => {
          const v = Number(e.target.value);
          onChange(v === serving.version ? undefined : v);
        }}
      >
        {versions.map((v) => (
          <option key={v.version} value={v.version}>
            v{v.version}
            {v.serving ? " (serving)" : v.supersededBy ? ` (superseded by v${v.supersededBy})` : ""}
            {v.phase ? ` · ${v.phase}` : ""}
          </option>
        ))}
      </select>
    </label>
  );
}
