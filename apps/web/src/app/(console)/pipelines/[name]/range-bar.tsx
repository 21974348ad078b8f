"use client";
// Which range the charts, the graph and the signals cover: a preset ending now (moves with time), or a
// fixed custom one (also what a drag-to-zoom on any chart sets).
import { RANGE_PRESETS, type TRangePreset } from "@sluice/services/signals/pure";
import { useState } from "react";
import { formatInstant } from "@/lib/format";
import type { TRangeChoice } from "./use-dashboard-range";

const local = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

export function RangeBar({
  range,
  onChange,
  stepSeconds,
}: {
  range: TRangeChoice;
  onChange: (r: TRangeChoice) => void;
  stepSeconds: number | null;
}) {
  const [custom, setCustom] = useState(() => ({
    from: local(new Date(Date.now() - 3600_000)),
    to: local(new Date()),
  }));
  const [error, setError] = useState<string | null>(null);
  const apply = () => {
    const from = new Date(custom.from);
    const to = new Date(custom.to);
    if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()))
      return setError("Enter both a start and an end.");
    if (to <= from) return setError("The end must be after the start.");
    setError(null);
    onChange({ from, to });
  };
  return (
    <div className="range-bar" data-testid="range-bar">
      <span className="small muted">Range</span>
      {(Object.keys(RANGE_PRESETS) as TRangePreset[]).map((p) => (
        <button
          key={p}
          type="button"
          className="button button--small"
          aria-pressed={"preset" in range && range.preset === p}
          onClick={() => onChange({ preset: p })}
        >
          {p}
        </button>
      ))}
      <details>
        <summary className="small">custom</summary>
        <div className="range-bar">
          <label className="small">
            from{" "}
            <input
              type="datetime-local"
              value={custom.from}
              onChange={(e) => setCustom({ ...custom, from: e.target.value })}
            />
          </label>
          <label className="small">
            to{" "}
            <input
              type="datetime-local"
              value={custom.to}
              onChange={(e) => setCustom({ ...custom, to: e.target.value })}
            />
          </label>
          <button type="button" className="button button--small" onClick={apply}>
            Show
          </button>
          {error ? <span className="form__error small">{error}</span> : null}
        </div>
      </details>
      {"from" in range ? (
        <span className="small" data-testid="range-fixed">
          {formatInstant(range.from)} – {formatInstant(range.to)}{" "}
          <button
            type="button"
            className="button button--small button--ghost"
            onClick={() => onChange({ preset: "1h" })}
          >
            back to live (1h)
          </button>
        </span>
      ) : (
        <span className="small muted">live, ending now</span>
      )}
      {stepSeconds ? (
        <span className="small muted">
          · one point per {stepSeconds >= 60 ? `${stepSeconds / 60} min` : `${stepSeconds} s`} · drag across a
          chart to zoom
        </span>
      ) : null}
    </div>
  );
}
