// How the console names a row's outcome, for every outcome the engine has (@sluice/engine/outcomes, the
// one list): a new outcome fails the type check here until it has a label, so no page's list misses it.
import { OUTCOMES, outcomeColumn, type Outcome, type OutcomeColumn } from "@sluice/engine/outcomes";

export const OUTCOME_LABELS: Record<Outcome, string> = {
  sink: "sink",
  duplicate: "duplicate",
  filtered: "filtered",
  quarantined: "quarantined",
  deadLetter: "dead letter",
  late: "late",
  stale: "stale",
  dropped: "dropped",
};

/** How an outcome reads on a page: fine (reached the sink), expected (counted and meant) or worth a look. */
export type TOutcomeTone = "ok" | "idle" | "warn";
export const OUTCOME_TONES: Record<Outcome, TOutcomeTone> = {
  sink: "ok",
  duplicate: "idle",
  filtered: "idle",
  stale: "idle",
  dropped: "idle",
  // Rows someone may need to fix or replay: the contract refused them, they could not be read, or
  // they came after their window closed.
  quarantined: "warn",
  deadLetter: "warn",
  late: "warn",
};

/** Every outcome in reading order with the name a row's verdict uses (`dead_letter`) and its label. */
export const OUTCOME_COLUMNS: readonly { outcome: Outcome; column: OutcomeColumn; label: string }[] =
  OUTCOMES.map((outcome) => ({ outcome, column: outcomeColumn(outcome), label: OUTCOME_LABELS[outcome] }));

const BY_COLUMN = new Map(OUTCOME_COLUMNS.map((c) => [c.column as string, c]));

/** A row verdict's outcome (`dead_letter`) as the console shows it: its label and tone. */
export function outcomeOfColumn(column: string): { label: string; tone: TOutcomeTone } {
  const known = BY_COLUMN.get(column);
  return known ? { label: known.label, tone: OUTCOME_TONES[known.outcome] } : { label: column, tone: "warn" };
}

/**
 * Counts per outcome in reading order, `dropped` spelt out per expectation: what a list of a batch's
 * outcomes shows. An outcome the counts leave out is not listed — one output of a pipeline with several
 * outputs or a join (`TOutputProgressView`) has no `quarantined` (the contract ran before any output).
 */
export function outcomeEntries(
  counts: Partial<Record<Exclude<Outcome, "dropped">, number>> & { dropped: Record<string, number> },
): { key: string; label: string; n: number; tone: TOutcomeTone }[] {
  return OUTCOMES.flatMap((outcome) => {
    if (outcome === "dropped") return droppedEntries(counts.dropped);
    const n = counts[outcome];
    return n === undefined
      ? []
      : [{ key: outcome, label: OUTCOME_LABELS[outcome], n, tone: OUTCOME_TONES[outcome] }];
  });
}

// With no expectation dropping anything, one "dropped 0" line still says the outcome exists.
function droppedEntries(dropped: Record<string, number>) {
  const named = Object.entries(dropped).filter(([, n]) => n > 0);
  return named.length === 0
    ? [{ key: "dropped", label: OUTCOME_LABELS.dropped, n: 0, tone: OUTCOME_TONES.dropped }]
    : named.map(([name, n]) => ({
        key: `dropped:${name}`,
        label: `dropped by ${name}`,
        n,
        tone: OUTCOME_TONES.dropped,
      }));
}
