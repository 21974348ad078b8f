"use client";
// Every chart on the pipeline page is this component: a Recharts chart of bucketed points with gaps
// left as gaps, a tooltip with the exact values and the bucket's batch range, lifecycle and version
// markers, and drag-to-zoom (the page keeps the zoomed range in the URL, so it survives refreshes and
// reloads). The numbers behind the drawn points are on the root as `data-plotted` (plotted.ts).
import { useState } from "react";
import {
  Area,
  Bar,
  CartesianGrid,
  ComposedChart,
  Line,
  ReferenceArea,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { formatInstant, formatTick, formatValue, type TUnit } from "@/lib/format";
import { plottedAttribute } from "./plotted";

export interface TChartSeries {
  key: string;
  label: string;
  color: string;
  kind?: "line" | "area" | "bar";
  /** Series with the same stack id are stacked (phases, outcomes). */
  stack?: string;
  /** Values on the right axis (its own unit). */
  right?: boolean;
  dashed?: boolean;
}

export interface TChartRow {
  t: number;
  firstBatchId: number | null;
  lastBatchId: number | null;
  batches: number;
  values: Record<string, number | null>;
  /** Extra words for the tooltip (an idle partition). */
  notes?: string[];
}

export interface TChartMarker {
  at: number;
  label: string;
}

export interface TTimeSeriesChartProps {
  id: string;
  title: string;
  /** What the chart shows, where the numbers come from (also the title's hover text). */
  definition: string;
  unit: TUnit;
  rightUnit?: TUnit;
  series: TChartSeries[];
  rows: TChartRow[];
  stepSeconds: number;
  markers?: TChartMarker[];
  onZoom?: (from: Date, to: Date) => void;
  /** Shown instead of an empty plot. */
  emptyText?: string;
}

export function TimeSeriesChart(p: TTimeSeriesChartProps) {
  const [drag, setDrag] = useState<{ from: number; to: number } | null>(null);
  const data = p.rows.map((r) => ({ t: r.t, ...r.values }));
  const plotted = plottedAttribute(
    p.rows.map((r) => new Date(r.t)),
    Object.fromEntries(p.series.map((s) => [s.key, p.rows.map((r) => r.values[s.key] ?? null)])),
  );
  const span = p.rows.length > 1 ? p.rows.at(-1)!.t - p.rows[0]!.t : 0;
  const hasData = p.rows.some((r) =>
    p.series.some((s) => (r.values[s.key] ?? null) !== null && r.values[s.key] !== 0),
  );
  const byT = new Map(p.rows.map((r) => [r.t, r]));

  return (
    <figure
      className="chart"
      data-testid={`chart-${p.id}`}
      data-plotted={plotted}
      data-step-seconds={p.stepSeconds}
    >
      <figcaption>
        <h3 className="chart__title" title={p.definition}>
          {p.title}
        </h3>
        <p className="chart__def muted">{p.definition}</p>
      </figcaption>
      {!hasData ? (
        <div className="chart__empty muted small" data-testid="chart-empty">
          {p.emptyText ?? "Nothing in this range."}
        </div>
      ) : (
        <div style={{ width: "100%", height: 200, userSelect: "none" }}>
          <ResponsiveContainer width="100%" height="100%">
            <ComposedChart
              data={data}
              margin={{ top: 6, right: p.rightUnit ? 4 : 12, bottom: 0, left: 0 }}
              onMouseDown={(e) =>
                e?.activeLabel !== undefined &&
                setDrag({ from: Number(e.activeLabel), to: Number(e.activeLabel) })
              }
              onMouseMove={(e) =>
                drag && e?.activeLabel !== undefined && setDrag({ ...drag, to: Number(e.activeLabel) })
              }
              onMouseUp={() => {
                if (drag && drag.from !== drag.to && p.onZoom) {
                  const [a, b] = [Math.min(drag.from, drag.to), Math.max(drag.from, drag.to)];
                  p.onZoom(new Date(a), new Date(b + p.stepSeconds * 1000));
                }
                setDrag(null);
              }}
            >
              <CartesianGrid stroke="#eaeef2" vertical={false} />
              <XAxis
                dataKey="t"
                type="number"
                scale="time"
                domain={["dataMin", "dataMax"]}
                tickFormatter={(t: number) => formatTick(t, span)}
                fontSize={11}
                minTickGap={40}
              />
              <YAxis
                yAxisId="left"
                fontSize={11}
                width={56}
                tickFormatter={(v: number) => formatValue(v, p.unit)}
              />
              {p.rightUnit ? (
                <YAxis
                  yAxisId="right"
                  orientation="right"
                  fontSize={11}
                  width={56}
                  tickFormatter={(v: number) => formatValue(v, p.rightUnit!)}
                />
              ) : null}
              <Tooltip
                isAnimationActive={false}
                content={({ active, label }) => {
                  const row = active && label !== undefined ? byT.get(Number(label)) : undefined;
                  if (!row) return null;
                  return (
                    <div className="chart-tip" data-testid="chart-tooltip">
                      <div className="strong">
                        {formatInstant(row.t)} <span className="muted">(+{p.stepSeconds} s)</span>
                      </div>
                      {p.series.map((s) => (
                        <div key={s.key}>
                          <span style={{ color: s.color }}>■</span> {s.label}:{" "}
                          {formatValue(row.values[s.key], s.right ? p.rightUnit! : p.unit, true)}
                        </div>
                      ))}
                      <div className="muted">
                        {row.batches > 0
                          ? `batches ${row.firstBatchId}–${row.lastBatchId} (${row.batches})`
                          : "no batch committed"}
                      </div>
                      {row.notes?.map((n) => (
                        <div key={n} className="warn">
                          {n}
                        </div>
                      ))}
                    </div>
                  );
                }}
              />
              {p.series.map((s) => {
                const common = {
                  key: s.key,
                  dataKey: s.key,
                  name: s.label,
                  yAxisId: s.right ? "right" : "left",
                  isAnimationActive: false,
                } as const;
                if (s.kind === "bar") return <Bar {...common} fill={s.color} stackId={s.stack} />;
                if (s.kind === "area")
                  return (
                    <Area
                      {...common}
                      type="monotone"
                      stroke={s.color}
                      fill={s.color}
                      fillOpacity={0.3}
                      stackId={s.stack}
                      connectNulls={false}
                    />
                  );
                return (
                  <Line
                    {...common}
                    type="monotone"
                    stroke={s.color}
                    strokeWidth={1.6}
                    dot={false}
                    connectNulls={false}
                    strokeDasharray={s.dashed ? "4 3" : undefined}
                  />
                );
              })}
              {(p.markers ?? []).map((m) => (
                // Unlabelled: several markers close together would write over each other; the list is under the charts.
                <ReferenceLine
                  key={`${m.at}-${m.label}`}
                  x={m.at}
                  yAxisId="left"
                  stroke="#8250df"
                  strokeDasharray="3 3"
                />
              ))}
              {drag ? (
                <ReferenceArea yAxisId="left" x1={drag.from} x2={drag.to} fill="#1f6feb" fillOpacity={0.12} />
              ) : null}
            </ComposedChart>
          </ResponsiveContainer>
        </div>
      )}
      <Legend series={p.series} />
    </figure>
  );
}

function Legend({ series }: { series: TChartSeries[] }) {
  return (
    <p className="small muted" style={{ margin: "0.25rem 0 0" }}>
      {series.map((s) => (
        <span key={s.key} style={{ marginRight: "0.75rem" }}>
          <span style={{ color: s.color }}>{s.dashed ? "┅" : "■"}</span> {s.label}
        </span>
      ))}
    </p>
  );
}
