// "Nothing vanishes silently": every input row ends in exactly one outcome, and the engine checks
// input = sum(outcomes) before it commits a batch. The list of outcomes is declared here once; the
// counts' schema and type, the services' summaries, the metrics and the console derive from it.
import { z } from "zod";
import { InvariantError } from "../errors";

/**
 * Every outcome a row can have, in the order people read them. sink: reached the result (a ledger
 * row, a window's accumulators, an applied change, a webhook delivery); duplicate; filtered;
 * quarantined (by the contract); deadLetter; late; stale (a CDC change older than, or equal to, the
 * sequence already applied for its key: never applied); dropped (by a `drop` expectation, counted
 * per expectation name).
 */
export const OUTCOMES = [
  "sink",
  "duplicate",
  "filtered",
  "quarantined",
  "deadLetter",
  "late",
  "stale",
  "dropped",
] as const;
export type Outcome = (typeof OUTCOMES)[number];
/** The outcomes counted as one number; `dropped` is counted per expectation. */
export type CountedOutcome = Exclude<Outcome, "dropped">;
export const COUNTED_OUTCOMES = OUTCOMES.filter((o): o is CountedOutcome => o !== "dropped");

/** `deadLetter` → `dead_letter`: how tables, dead letters and metrics name an outcome. */
type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;
export type OutcomeColumn = SnakeCase<Outcome>;

export function outcomeColumn<O extends Outcome>(outcome: O): SnakeCase<O> {
  // The replacement is exactly what SnakeCase spells at the type level.
  return outcome.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) as SnakeCase<O>;
}

/** One value per outcome, in OUTCOMES' order: what a count, a column or a label per outcome is built with. */
export function perOutcome<T>(valueOf: (outcome: Outcome) => T): Record<Outcome, T> {
  // Every key of Record<Outcome, T> is set: the entries are OUTCOMES, all of them.
  return Object.fromEntries(OUTCOMES.map((o) => [o, valueOf(o)])) as Record<Outcome, T>;
}

// Each count reads as 0 when a record does not have it (records written before `stale` existed) or
// has something else there: a malformed record never breaks a page.
const count = z.number().int().nonnegative().catch(0);

/** A batch's outcome counts, as batch_log.outcomes and the progress record keep them. */
export const ZOutcomeCounts = z.object({
  ...perOutcome(() => count),
  // A fresh object per parse: a batch adds to its own counts (a shared `{}` would add to every batch's).
  dropped: z.record(z.string(), z.number()).catch(() => ({})),
});
export type OutcomeCounts = z.output<typeof ZOutcomeCounts>;

export function emptyOutcomes(): OutcomeCounts {
  return ZOutcomeCounts.parse({});
}

export function totalOutcomes(o: OutcomeCounts): number {
  return (
    COUNTED_OUTCOMES.reduce((sum, outcome) => sum + o[outcome], 0) +
    Object.values(o.dropped).reduce((a, b) => a + b, 0)
  );
}

export function assertBalanced(input: number, o: OutcomeCounts): void {
  const total = totalOutcomes(o);
  if (total !== input) {
    throw new InvariantError(
      `batch accounting does not balance: ${input} input rows but ${total} outcomes ${JSON.stringify(o)}`,
    );
  }
}
