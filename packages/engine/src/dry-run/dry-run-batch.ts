// A dry run: what one batch over these records would do, with no commit. It is the batch's own code —
// processBatch (decode → contract → expectations → filter → late → dedup), advanceTime (the watermark)
// and the result operator's prepare step (windows, CDC) — with the parts that write left out: no plan
// recorded, no commit transaction, no operator write(), no webhook call. The state it starts from is
// empty (a draft has none), so a duplicate is a duplicate within the sample.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import {
  compileSpec,
  contractColumns,
  outputColumns,
  outputViews,
  type TPipelineSpec,
} from "@sluice/pipeline-spec";
import { CdcOperator } from "../cdc/cdc-operator";
import { dedupKey } from "../batch/dedup";
import { processBatch, type ExpectationFailure, type RowVerdict, type SinkRow } from "../batch/process-batch";
import { screenOutput, type OutputOutcomes } from "../output/screen-output";
import type { OutcomeCounts } from "../batch/outcomes";
import {
  applyPrepared,
  type OperatorReport,
  type PreparedResult,
  type ResultOperator,
} from "../operator/result-operator";
import { advanceTime } from "../runner/advance-time";
import type { SourceRecord } from "../source/source";
import { sinkTableFor } from "../store/sink-table";
import type { ResultRow } from "../store/write-result";
import { windowsContaining } from "../window/window-assign";
import { WindowOperator } from "../window/window-operator";

export interface DryRunRow {
  partition: number;
  offset: number;
  /** The Kafka timestamp (ingest time), ms since the epoch. */
  timestamp: number;
  key: string | null;
  /** The record's value as text, cut at MAX_VALUE_CHARS. */
  value: string | null;
  verdict: RowVerdict;
  /** For windowed aggregates: the group and the windows this row would update. */
  windows?: { group: string; start?: Date; end?: Date }[];
}

export interface DryRunResult {
  inputRows: number;
  outcomes: OutcomeCounts;
  /** Violations of `warn` expectations (rows kept). */
  warnings: Record<string, number>;
  /** Violations of `fail` expectations: a real batch over these records would stop and commit nothing. */
  failures: ExpectationFailure[];
  /** Row by row, in source order per partition. */
  rows: DryRunRow[];
  /** What the batch would write: ledger rows, window results, applied changes, or the webhook payloads. */
  result: { kind: "table" | "window" | "cdc" | "webhook"; target: string; rows: Record<string, unknown>[] };
  /** The watermark the batch would commit. */
  watermark: Date | null;
  operator?: OperatorReport;
  /** A pipeline with several outputs or a join: each output's outcomes and result (`result` is the first's). */
  outputs?: DryRunOutput[];
  /** A join: why its fields are empty in a dry run. */
  join?: string;
}

export interface DryRunOutput {
  name: string;
  result: DryRunResult["result"];
  outcomes?: OutputOutcomes;
  operator?: OperatorReport;
}

const MAX_VALUE_CHARS = 2000;

/**
 * Evaluate one batch over `records` without committing anything. `pool` is only read (the operator's
 * state lookups, under a version id that does not exist, so they find nothing).
 */
export async function dryRunBatch(
  pool: pg.Pool,
  spec: TPipelineSpec,
  records: SourceRecord[],
  now: Date = new Date(),
  limits: { yieldEvery?: number; signal?: AbortSignal } = {},
): Promise<DryRunResult> {
  const compiled = compileSpec(spec);
  const verdicts = new Map<SourceRecord, RowVerdict>();
  const processed = await processBatch(records, {
    compiled,
    columns: contractColumns(spec),
    watermark: null,
    lookupSeenKeys: async () => new Set(),
    trace: (record, verdict) => verdicts.set(record, verdict),
    ...limits,
  });
  const { watermark } = advanceTime(compiled, { watermark: null, eventTimeMax: {} }, processed, now);

  // Each output (a pipeline with one sink has one): screened like a real batch, then its operator's prepare step.
  const outputs: DryRunOutput[] = [];
  let outcome = processed;
  for (const view of outputViews(spec)) {
    const staged = spec.outputs !== undefined || spec.join !== undefined;
    const own = compileSpec(view.spec);
    const screened = staged ? screenOutput(processed.sinkRows, own, null) : undefined;
    const rows = screened ? screened.rows : processed.sinkRows;
    const { result, prepared } = await dryRunOutput(
      pool,
      view.spec,
      own,
      rows,
      watermark,
      processed.failures.length === 0,
    );
    if (!staged && prepared) outcome = applyPrepared(processed, prepared);
    outputs.push({
      name: view.name,
      result,
      ...(screened ? { outcomes: screened.outcomes } : {}),
      ...(prepared ? { operator: prepared.report } : {}),
    });
  }
  const first = outputs[0]!;

  return {
    inputRows: records.length,
    outcomes: outcome.outcomes,
    warnings: processed.warnings,
    failures: processed.failures,
    rows: records.map((record) => rowView(record, verdicts.get(record)!, compiled.spec, compiled.timing)),
    result: first.result,
    watermark,
    ...(first.operator ? { operator: first.operator } : {}),
    ...(spec.outputs || spec.join ? { outputs } : {}),
    ...(spec.join ? { join: JOIN_NOT_EVALUATED } : {}),
  };
}

/** A join reads its dimension only in a running pipeline: a dry run shows the rows with its fields empty. */
const JOIN_NOT_EVALUATED =
  "the join is not evaluated in a dry run (it reads the dimension changelog only while the pipeline runs): rows reach the outputs with the joined fields empty";

/** One output's part of a dry run: what it would write (its operator prepared over an empty state). */
async function dryRunOutput(
  pool: pg.Pool,
  spec: TPipelineSpec,
  compiled: ReturnType<typeof compileSpec>,
  rows: SinkRow[],
  watermark: Date | null,
  runOperator: boolean,
): Promise<{ result: DryRunResult["result"]; prepared: PreparedResult | undefined }> {
  const noVersion = `dry-run-${randomBytes(8).toString("hex")}`;
  let captured: ResultRow[] | undefined;
  let operator: ResultOperator | undefined;
  const sink = spec.sink!;
  const pgSink = sink.postgres;
  if (spec.aggregate) {
    // A webhook-kind output that only keeps the rows: the operator hands over exactly what it would write or send.
    operator = new WindowOperator(pool, noVersion, compiled, {
      kind: "webhook",
      deliver: async (result) => {
        captured = result;
        return {};
      },
    });
  } else if (spec.cdc && pgSink) {
    operator = new CdcOperator(
      pool,
      noVersion,
      compiled,
      sinkTableFor(pgSink.table, outputColumns(spec), pgSink.key, pgSink.mode),
      spec.source.kafka.topic,
    );
  }
  const prepared =
    operator && runOperator ? await operator.prepare({ batchId: 0, epoch: 0, rows, watermark }) : undefined;
  const target = pgSink ? pgSink.table : (sink.webhook?.url ?? `$${sink.webhook?.urlFromEnv ?? "?"}`);
  const kind = spec.aggregate ? "window" : spec.cdc ? "cdc" : pgSink ? "table" : "webhook";
  const resultRows: Record<string, unknown>[] =
    captured ??
    rows.map((r) => ({
      ...r.values,
      ...(r.rescued ? { _rescued: r.rescued } : {}),
      _partition: r.partition,
      _offset: r.offset,
    }));
  // The batch id and version a real batch would stamp on its rows do not exist for a draft.
  const clean = resultRows.map(({ _batch_id: _b, _pipeline_version: _v, ...row }) => row);
  return { result: { kind, target, rows: clean }, prepared };
}

function rowView(
  record: SourceRecord,
  verdict: RowVerdict,
  spec: TPipelineSpec,
  timing: { windowSizeMs?: number; windowSlideMs?: number },
): DryRunRow {
  const value = record.value === null ? null : record.value.toString("utf8");
  const row: DryRunRow = {
    partition: record.partition,
    offset: record.offset,
    timestamp: record.timestamp,
    key: record.key === null ? null : record.key.toString("utf8"),
    value: value !== null && value.length > MAX_VALUE_CHARS ? `${value.slice(0, MAX_VALUE_CHARS)}…` : value,
    verdict,
  };
  const aggregate = spec.aggregate;
  const size = timing.windowSizeMs;
  const eventColumn = spec.eventTime?.column;
  if (verdict.outcome === "sink" && aggregate && verdict.values) {
    const group = dedupKey(verdict.values, aggregate.groupBy);
    const t = eventColumn ? (verdict.values[eventColumn] as Date | null) : null;
    row.windows =
      size !== undefined && t
        ? windowsContaining(t.getTime(), size, timing.windowSlideMs ?? size).map((w) => ({
            group,
            start: new Date(w.start),
            end: new Date(w.end),
          }))
        : [{ group }]; // a keyed running aggregate: one state row per group
  }
  return row;
}
