"use client";
// Input vs processing rate over the last hour, small enough for a table row. Input (what arrives on
// the topic) is the grey area, processing (what the pipeline commits) the line: a line under the area
// for long means it is falling behind.
import { Area, ComposedChart, Line, Tooltip, YAxis } from "recharts";
import { formatInstant, formatValue } from "@/lib/format";
import { plottedAttribute } from "./plotted";

export interface TSparklineProps {
  t: Date[];
  input: (number | null)[];
  processing: number[];
  label: string;
}

export function RateSparkline({ t, input, processing, label }: TSparklineProps) {
  const data = t.map((at, i) => ({
    at: at.getTime(),
    input: input[i] ?? null,
    processing: processing[i] ?? 0,
  }));
  return (
    <div
      className="spark"
      data-testid="sparkline"
      data-plotted={plottedAttribute(t, { input, processing })}
      aria-label={label}
      role="img"
    >
      <ComposedChart width={140} height={34} data={data} margin={{ top: 2, right: 2, bottom: 2, left: 2 }}>
        <YAxis hide domain={[0, "auto"]} />
        <Area
          dataKey="input"
          type="monotone"
          stroke="none"
          fill="var(--chart-input)"
          fillOpacity={0.45}
          isAnimationActive={false}
          connectNulls={false}
        />
        <Line
          dataKey="processing"
          type="monotone"
          stroke="var(--chart-processing)"
          strokeWidth={1.5}
          dot={false}
          isAnimationActive={false}
        />
        <Tooltip
          allowEscapeViewBox={{ x: true, y: true }}
          wrapperStyle={{ zIndex: 10 }}
          content={({ active, payload }) => {
            const p = active ? (payload?.[0]?.payload as (typeof data)[number] | undefined) : undefined;
            return p ? (
              <div className="chart-tip">
                <div className="muted">{formatInstant(p.at)} (1 min)</div>
                <div>input {formatValue(p.input, "rate", true)}</div>
                <div>processing {formatValue(p.processing, "rate", true)}</div>
              </div>
            ) : null;
          }}
        />
      </ComposedChart>
    </div>
  );
}
