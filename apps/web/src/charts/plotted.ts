// The numbers behind a chart's rendered points, put on its root element as JSON data attributes, so a
// browser test (or a curious operator with devtools) can compare what is drawn with the API and with
// batch_log: `data-plotted='{"t":[…],"series":{"input":[…]}}'`. One place for the format.

export interface TPlotted {
  /** Bucket starts, epoch milliseconds. */
  t: number[];
  /** Per series key, the plotted value of each bucket (null: a gap). */
  series: Record<string, (number | null)[]>;
}

export function plottedAttribute(t: Date[], series: Record<string, (number | null)[]>): string {
  const round = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);
  return JSON.stringify({
    t: t.map((d) => d.getTime()),
    series: Object.fromEntries(Object.entries(series).map(([k, vs]) => [k, vs.map(round)])),
  } satisfies TPlotted);
}
