// Every output's part of a batch, before the commit: each output screens the rows that reach it
// (screen-output.ts) and prepares its result — a ledger's rows, or its operator's windows, changes or
// deliveries — against its own watermark. Inside the one batch transaction each output then writes
// its state and result (commit-batch.ts), so all outputs commit a batch together or not at all.
import type pg from "pg";
import type { DeadLetterRow, ExpectationFailure, SinkRow } from "../batch/process-batch";
import { earliestEventTime } from "../batch/watermark";
import type { CommittedWatermark, OperatorReport, StateDelta } from "../operator/result-operator";
import { writeSinkRows, type SinkWriteMeta } from "../store/write-sink";
import type { OpenedOutput } from "./open-outputs";
import { screenOutput, type OutputOutcomes } from "./screen-output";

export interface PreparedOutput {
  name: string;
  outcomes: OutputOutcomes;
  warnings: Record<string, number>;
  lateAccepted: number;
  failures: ExpectationFailure[];
  /** Deliveries given up (a webhook output): dead letters of the pipeline. */
  deadLetters: DeadLetterRow[];
  /** This output's watermark after the batch. */
  watermark: Date | null;
  /** The earliest event time among the rows it accepted (null: none, or no event time). */
  earliestAccepted: Date | null;
  /**
   * Writes its state and result inside the batch transaction; an append table's key conflicts become
   * duplicates. `committed`: its watermark as the commit decided it (a partition group's).
   */
  write(client: pg.PoolClient, committed?: CommittedWatermark): Promise<StateDelta>;
  readonly report: OperatorReport | undefined;
  onCommitted?(): void;
}

export interface OutputsInput {
  batchId: number;
  epoch: number;
  /** The rows that reach the outputs: after dedup, or as the join emits them. */
  rows: SinkRow[];
  /** Each output's watermark: committed by the previous batch (the late check) and after this one (its result). */
  before: ReadonlyMap<string, Date | null>;
  after: ReadonlyMap<string, Date | null>;
  meta: SinkWriteMeta;
}

/**
 * Screens the rows for every output first: a `fail` expectation in any output stops the batch before
 * any output has a side effect (a webhook delivery). Then each output prepares its result.
 */
export async function prepareOutputs(
  outputs: readonly OpenedOutput[],
  input: OutputsInput,
): Promise<{ failures: ExpectationFailure[]; outputs: PreparedOutput[] }> {
  const screened = outputs.map((o) => screenOutput(input.rows, o.compiled, input.before.get(o.name) ?? null));
  const failures = screened.flatMap((s) => s.failures);
  if (failures.length > 0) return { failures, outputs: [] };
  const prepared: PreparedOutput[] = [];
  for (const [i, output] of outputs.entries()) {
    const { rows, outcomes, warnings, lateAccepted } = screened[i]!;
    const watermark = input.after.get(output.name) ?? null;
    const earliestAccepted = earliestEventTime(rows, output.compiled.spec.eventTime?.column);
    const base = {
      name: output.name,
      outcomes,
      warnings,
      lateAccepted,
      failures: [],
      watermark,
      earliestAccepted,
    };
    const { operator, sink } = output.result;
    if (operator) {
      const result = await operator.prepare({ batchId: input.batchId, epoch: input.epoch, rows, watermark });
      outcomes.sink -= result.stale + result.failed.length;
      outcomes.stale += result.stale;
      outcomes.deadLetter += result.failed.length;
      prepared.push({
        ...base,
        deadLetters: result.failed.map(({ row, reason }) => failedDelivery(row, reason)),
        write: (client, committed) => result.write(client, committed),
        get report() {
          return result.report;
        },
        ...(result.onCommitted ? { onCommitted: () => result.onCommitted!() } : {}),
      });
      continue;
    }
    prepared.push({
      ...base,
      deadLetters: [],
      write: async (client) => {
        const written = await writeSinkRows(client, sink!, rows, input.meta);
        // Rows whose key the append table already holds are duplicates in this output.
        outcomes.duplicate += outcomes.sink - written;
        outcomes.sink = written;
        return { rows: 0, bytes: 0 };
      },
      report: undefined,
    });
  }
  return { failures: [], outputs: prepared };
}

/** A row whose delivery was given up, as a dead letter (its raw bytes when the row still has its record). */
export function failedDelivery(row: SinkRow, reason: string): DeadLetterRow {
  const value = row.record?.value ?? Buffer.from(JSON.stringify(row.values));
  return {
    outcome: "dead_letter",
    reason,
    record: {
      partition: row.partition,
      offset: row.offset,
      key: row.record?.key ?? null,
      value,
      timestamp: row.ingestTimeMs,
    },
    payload: JSON.parse(JSON.stringify(row.values)) as Record<string, unknown>,
  };
}
