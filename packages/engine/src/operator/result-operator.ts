// A stateful stage between dedup and commit — event-time windows, CDC apply-changes, a webhook. It
// prepares the batch's result *before* the commit transaction (reading state is safe then: only the
// lease holder commits, and the commit is fenced on the batch before it) and writes its state and
// result *inside* that transaction, so state and sink move together with the checkpoint (semantics 1).
import type pg from "pg";
import type { DeadLetterRow, ProcessedBatch, SinkRow } from "../batch/process-batch";

export interface StateDelta {
  rows: number;
  bytes: number;
}

export interface OperatorInput {
  batchId: number;
  /** The runner's lease epoch: side effects outside the transaction are fenced on it. */
  epoch: number;
  /** Rows that passed every phase up to dedup, in source order. */
  rows: SinkRow[];
  /** The watermark this batch commits (windows behind it plus allowedLateness are final). */
  watermark: Date | null;
}

/** The watermark a commit stores (for a partition group: decided under the version's row lock). */
export interface CommittedWatermark {
  watermark: Date | null;
}

/** What the progress record shows about the operator in this batch. */
export type OperatorReport = { kind: "window" | "cdc" | "webhook" } & Record<string, number | string>;

export interface PreparedResult {
  /** Rows that did not change the result because a newer change for their key was already applied. */
  stale: number;
  /** Rows whose result failed for good (a webhook delivery out of attempts): dead letters. */
  failed: { row: SinkRow; reason: string }[];
  /**
   * Writes state and result inside the batch transaction; returns the change in state size.
   * `committed`: the watermark the commit stores — for a partition group, this batch's time applied
   * under the version's lock onto what other groups committed (shared windows finalize by it).
   * `stale`: changes an operator applying them only in the commit found older than what was applied
   * (partition groups' CDC): they leave `sink` there instead of in applyPrepared.
   */
  write(client: pg.PoolClient, committed?: CommittedWatermark): Promise<StateDelta & { stale?: number }>;
  report: OperatorReport;
  /** Called once the batch transaction committed (an operator may then trust a cache of its state). */
  onCommitted?(): void;
}

export interface ResultOperator {
  readonly kind: OperatorReport["kind"];
  prepare(input: OperatorInput): Promise<PreparedResult>;
}

/** The batch's outcomes once the operator has spoken: stale changes and failed deliveries leave `sink`. */
export function applyPrepared(processed: ProcessedBatch, prepared: PreparedResult): ProcessedBatch {
  const outcomes = structuredClone(processed.outcomes);
  outcomes.sink -= prepared.stale + prepared.failed.length;
  outcomes.stale += prepared.stale;
  outcomes.deadLetter += prepared.failed.length;
  const deadLetters: DeadLetterRow[] = prepared.failed.map(({ row, reason }) => {
    const value = Buffer.from(JSON.stringify(row.values));
    return {
      outcome: "dead_letter",
      reason,
      record: { partition: row.partition, offset: row.offset, key: null, value, timestamp: row.ingestTimeMs },
      payload: JSON.parse(value.toString("utf8")),
    };
  });
  return { ...processed, outcomes, deadLetters: [...processed.deadLetters, ...deadLetters] };
}
