// "Nothing vanishes silently": every input row ends in exactly one outcome, and the engine checks
// input = sum(outcomes) before it commits a batch.
import { InvariantError } from "../errors";

export interface OutcomeCounts {
  /** Rows that reached the result: a ledger row, a window's accumulators, an applied change, a webhook delivery. */
  sink: number;
  duplicate: number;
  filtered: number;
  quarantined: number;
  deadLetter: number;
  late: number;
  /** CDC changes older than (or equal to) the sequence already applied for their key: never applied. */
  stale: number;
  /** Rows dropped by a `drop` expectation, per expectation name. */
  dropped: Record<string, number>;
}

export function emptyOutcomes(): OutcomeCounts {
  return {
    sink: 0,
    duplicate: 0,
    filtered: 0,
    quarantined: 0,
    deadLetter: 0,
    late: 0,
    stale: 0,
    dropped: {},
  };
}

export function totalOutcomes(o: OutcomeCounts): number {
  return (
    o.sink +
    o.duplicate +
    o.filtered +
    o.quarantined +
    o.deadLetter +
    o.late +
    (o.stale ?? 0) +
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
