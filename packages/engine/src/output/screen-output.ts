// What one output lets through of the rows that reach it: its own expectations (warn counts, drop
// leaves this output only, fail stops the batch), its own filter, and its own late check against its
// watermark and allowedLateness. The pipeline's contract, expectations, filter and dedup ran before
// (batch/process-batch.ts); a row refused here still counts in every other output.
import type { TCompiledSpec } from "@sluice/pipeline-spec";
import type { ExpectationFailure, SinkRow } from "../batch/process-batch";
import { lateHorizon } from "../batch/watermark";

/** One output's outcomes in a batch: every row that reached it has exactly one. */
export interface OutputOutcomes {
  /** Rows that reached this output (from the source, or released by the join). */
  rows: number;
  sink: number;
  filtered: number;
  /** Behind this output's watermark minus its allowedLateness (the row may count in another output). */
  late: number;
  /** An append table already holding the row's key. */
  duplicate: number;
  /** CDC changes older than the one applied. */
  stale: number;
  /** Deliveries given up (a webhook output): dead letters. */
  deadLetter: number;
  dropped: Record<string, number>;
}

export interface ScreenedRows {
  rows: SinkRow[];
  outcomes: OutputOutcomes;
  /** Violations of this output's `warn` expectations. */
  warnings: Record<string, number>;
  /** Violations of its `fail` expectations: the batch must not commit. */
  failures: ExpectationFailure[];
  /** Behind its watermark but within allowedLateness (in `sink`). */
  lateAccepted: number;
}

export function emptyOutputOutcomes(rows: number): OutputOutcomes {
  return { rows, sink: 0, filtered: 0, late: 0, duplicate: 0, stale: 0, deadLetter: 0, dropped: {} };
}

const MAX_FAILURE_SAMPLES = 5;

export function screenOutput(
  rows: readonly SinkRow[],
  compiled: TCompiledSpec,
  /** This output's watermark committed by the previous batch. */
  watermark: Date | null,
): ScreenedRows {
  const outcomes = emptyOutputOutcomes(rows.length);
  const warnings: Record<string, number> = {};
  const failures = new Map<string, ExpectationFailure>();
  const eventColumn = compiled.spec.eventTime?.column;
  const lateBefore = lateHorizon(watermark, compiled.timing.allowedLatenessMs)?.getTime() ?? -Infinity;
  const behind = watermark?.getTime() ?? -Infinity;
  const kept: SinkRow[] = [];
  let lateAccepted = 0;
  for (const row of rows) {
    const cel =
      compiled.expectations.length > 0 || compiled.filter ? compiled.toCelRow(row.values) : undefined;
    let droppedBy: string | undefined;
    for (const e of compiled.expectations) {
      if (e.test(cel!)) continue;
      if (e.action === "warn") warnings[e.name] = (warnings[e.name] ?? 0) + 1;
      else if (e.action === "fail") {
        const f = failures.get(e.name) ?? { rule: e.name, rowCount: 0, samples: [] };
        f.rowCount++;
        if (f.samples.length < MAX_FAILURE_SAMPLES)
          f.samples.push({ ...row.values, _partition: row.partition, _offset: row.offset });
        failures.set(e.name, f);
      } else droppedBy ??= e.name;
    }
    if (droppedBy) {
      outcomes.dropped[droppedBy] = (outcomes.dropped[droppedBy] ?? 0) + 1;
      continue;
    }
    if (compiled.filter && !compiled.filter.test(cel!)) {
      outcomes.filtered++;
      continue;
    }
    const t = eventColumn ? (row.values[eventColumn] as Date).getTime() : undefined;
    if (t !== undefined && t < lateBefore) {
      outcomes.late++;
      continue;
    }
    if (t !== undefined && t < behind) lateAccepted++;
    kept.push(row);
  }
  outcomes.sink = kept.length;
  return { rows: kept, outcomes, warnings, failures: [...failures.values()], lateAccepted };
}
