// Why the two results differ, from each side's progress records: the outcome counts of the batches
// that read inside the offsets both sides have read (engine `sumOutcomesWithin`), side by side, and
// the counts that differ in words, largest difference first — "dropped by expectation `x` in green:
// 412 (blue: 0)". Progress records count per batch, not per offset, so a batch straddling the end of
// the common range counts whole: the counts are exact when both sides' counted batches read exactly
// the same offsets (`sameInput`), and otherwise the input counts say by how much they differ.
import { COUNTED_OUTCOMES, sumOutcomesWithin, type CountedOutcome, type OutcomeTotals } from "@sluice/engine";
import type pg from "pg";
import type { TOutcomeComparison, TOutcomeCount, TReconcileInput } from "./reconciliation-report";

export async function explainOutcomes(
  db: pg.PoolClient,
  input: Pick<TReconcileInput, "blue" | "green">,
  range: { from: Record<string, number>; to: Record<string, number> },
): Promise<TOutcomeComparison> {
  const totals = (s: TReconcileInput["blue"]) =>
    sumOutcomesWithin(db, s.pipelineVersionId, range.to, range.from, s.output);
  const blue = await totals(input.blue);
  return compareOutcomes(blue, await totals(input.green));
}

// Every counted outcome has its words (the type says so).
const OUTCOME_WORDS: Record<string, string> = {
  input: "input rows read",
  sink: "rows that reached the result",
  duplicate: "duplicates",
  filtered: "filtered out",
  quarantined: "quarantined by the contract",
  deadLetter: "dead letters",
  late: "late (beyond allowedLateness)",
  stale: "stale changes",
  lateAccepted: "late but accepted (within allowedLateness)",
} satisfies Record<CountedOutcome | "input" | "lateAccepted", string>;

/** The metrics of both sides, each with its words; "expectation:x" becomes "violated:x" (warn: kept). */
export function compareOutcomes(blue: OutcomeTotals, green: OutcomeTotals): TOutcomeComparison {
  const b = withWarnings(blue.metrics);
  const g = withWarnings(green.metrics);
  const metrics = [...new Set([...Object.keys(b), ...Object.keys(g)])].sort(byMetric);
  const counts: TOutcomeCount[] = metrics.map((metric) => ({
    metric,
    blue: b[metric] ?? 0,
    green: g[metric] ?? 0,
  }));
  const sameInput = sameRead(blue.read, green.read);
  const explanations = counts
    .filter((c) => c.blue !== c.green && (c.metric !== "input" || !sameInput))
    .sort((x, y) => Math.abs(y.green - y.blue) - Math.abs(x.green - x.blue) || byMetric(x.metric, y.metric))
    .map((c) => {
      if (c.metric === "input")
        return `the counted batches read different amounts of input — blue ${c.blue}, green ${c.green} (a batch straddling the end of the common range counts whole): the other counts are close, not exact`;
      const [side, n, other, m] =
        c.green > c.blue ? ["green", c.green, "blue", c.blue] : ["blue", c.blue, "green", c.green];
      return `${metricWords(c.metric)} in ${side}: ${n} (${other}: ${m})`;
    });
  const side = (t: OutcomeTotals) => ({
    batches: t.batches,
    firstBatchId: t.firstBatchId,
    lastBatchId: t.lastBatchId,
  });
  return { counted: { blue: side(blue), green: side(green), sameInput }, counts, explanations };
}

export function metricWords(metric: string): string {
  const output = metric.startsWith("output.") ? " (this output's own)" : "";
  const m = metric.replace(/^output\./, "");
  const [kind, name] = m.includes(":") ? [m.slice(0, m.indexOf(":")), m.slice(m.indexOf(":") + 1)] : [m, ""];
  if (kind === "dropped") return `dropped by expectation \`${name}\`${output}`;
  if (kind === "violated") return `kept despite violating warn expectation \`${name}\`${output}`;
  return `${OUTCOME_WORDS[kind] ?? kind}${output}`;
}

/** "expectation:x" counts warn and drop violations alike; what was kept is the violations minus the drops. */
function withWarnings(metrics: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [metric, n] of Object.entries(metrics)) {
    const m = /^((?:output\.)?)expectation:(.*)$/.exec(metric);
    if (!m) {
      out[metric] = n;
      continue;
    }
    const kept = n - (metrics[`${m[1]}dropped:${m[2]}`] ?? 0);
    if (kept > 0) out[`${m[1]}violated:${m[2]}`] = kept;
  }
  return out;
}

// Input first, then the outcomes in the engine's order, "lateAccepted" right after "late".
const ORDER: string[] = [
  "input",
  ...COUNTED_OUTCOMES.flatMap((o) => (o === "late" ? [o, "lateAccepted"] : [o])),
];
function byMetric(a: string, b: string): number {
  const rank = (m: string) => {
    const i = ORDER.indexOf(m.replace(/^output\./, "").split(":")[0]!);
    return (m.startsWith("output.") ? 100 : 0) + (i < 0 ? 50 : i);
  };
  return rank(a) - rank(b) || a.localeCompare(b);
}

function sameRead(a: OutcomeTotals["read"], b: OutcomeTotals["read"]): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((p) => a[p]?.from === b[p]?.from && a[p]?.to === b[p]?.to);
}
