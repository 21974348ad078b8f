// The pure middle of a micro-batch: decode → contract → expectations → filter → late → dedup.
// It decides each row's single outcome; the only I/O, looking up dedup state, is injected.
import type { TColumn, TCompiledSpec } from "@sluice/pipeline-spec";
import type { SourceRecord } from "../source/source";
import { contractChecker } from "./contract";
import { decodeJson } from "./decode";
import { dedupKey } from "./dedup";
import { emptyOutcomes, type OutcomeColumn, type OutcomeCounts } from "./outcomes";
import { DriftCollector, type SchemaDrift } from "./schema-drift";
import { lateHorizon } from "./watermark";

export interface SinkRow {
  values: Record<string, unknown>;
  rescued: Record<string, unknown> | null;
  partition: number;
  offset: number;
  /** The record's Kafka timestamp, ms since the epoch (a number: one Date per row less to allocate). */
  ingestTimeMs: number;
  /** The source record (its raw bytes and key), for a row that may still become a dead letter (a join's `dimension_missing`). */
  record?: SourceRecord;
}

export interface DeadLetterRow {
  outcome: Extract<OutcomeColumn, "dead_letter" | "quarantined" | "late">;
  reason: string;
  record: SourceRecord;
  payload: Record<string, unknown> | null;
  /** The topic the record was read from, when not the source's (a join's dimension changelog). */
  topic?: string;
}

export interface ExpectationFailure {
  rule: string;
  rowCount: number;
  samples: Record<string, unknown>[];
}

export interface ProcessedBatch {
  sinkRows: SinkRow[];
  deadLetters: DeadLetterRow[];
  /** Keys to add to dedup state, with the time they expire by. */
  dedupInserts: { key: string; time: Date }[];
  outcomes: OutcomeCounts;
  /** Violations of `warn` expectations: rows kept, violations counted. */
  warnings: Record<string, number>;
  /** Violations of `fail` expectations: when non-empty, the batch must not commit. */
  failures: ExpectationFailure[];
  /** Highest event time among rows that passed the contract (drives the watermark). */
  maxEventTime: Date | null;
  /** The same per partition (the watermark follows the slowest active partition). */
  maxEventTimeByPartition: Map<number, Date>;
  /** Partitions this batch read at least one record from (they are not idle). */
  partitionsWithData: Set<number>;
  /** Rows behind the watermark but within allowedLateness that still reached the result (not an outcome: they are in `sink`). */
  lateAccepted: number;
  /** Highest dedup time (event time, or ingest time without eventTime) among rows read. */
  maxDedupTime: Date | null;
  /** Unknown fields rescued and type mismatches quarantined, per field (absent: none). */
  drift?: SchemaDrift;
}

/** One row's verdict, as the dry run shows it: the same decisions processBatch makes, reported as it makes them. */
export interface RowVerdict {
  // Staleness is decided where CDC changes are applied, after processing: no row's verdict here is stale.
  outcome: Exclude<OutcomeColumn, "stale">;
  reason?: string;
  /** The row after the contract (typed values). */
  values?: Record<string, unknown>;
  /** Unknown fields the contract rescued into _rescued. */
  rescued?: Record<string, unknown> | null;
  /** Every expectation's verdict, in spec order. */
  expectations?: { name: string; action: string; passed: boolean }[];
  droppedBy?: string;
  dedupKey?: string;
  /** Behind the watermark but within allowedLateness: still reaches the result. */
  lateAccepted?: boolean;
}

/** Observes each row's verdict (the dry run); a real batch passes none and pays nothing for it. */
export type RowTrace = (record: SourceRecord, verdict: RowVerdict) => void;

export interface ProcessOptions {
  compiled: TCompiledSpec;
  columns: TColumn[];
  /** The watermark committed by the previous batch. */
  watermark: Date | null;
  /**
   * Rows before this are late. Left out: the watermark minus allowedLateness. A pipeline with several
   * outputs or a join passes the earliest of its outputs' horizons (output/output-time.ts): a row is
   * the pipeline's `late` only when it is late for every output.
   */
  lateBefore?: Date | null;
  /** Which of these dedup keys are already in the state (seen in earlier batches). */
  lookupSeenKeys(keys: string[]): Promise<Set<string>>;
  trace?: RowTrace;
  /** Rows between two yields to the event loop (default 2000); the console's dry run yields often. */
  yieldEvery?: number;
  /** Checked at every yield: an aborted batch stops with the signal's reason (a dry run's time limit). */
  signal?: AbortSignal;
  /**
   * Records that passed the late check and dedup when they were first read — a replayed
   * `dimension_missing` dead letter, which a join refused after admitting it — so neither runs again.
   */
  admitted?: ReadonlySet<SourceRecord>;
}

const MAX_FAILURE_SAMPLES = 5;
const YIELD_EVERY = 2000;

export async function processBatch(records: SourceRecord[], opts: ProcessOptions): Promise<ProcessedBatch> {
  const { compiled, watermark, trace } = opts;
  // Behind the watermark but within allowedLateness a row still updates its window; before this it is late.
  const lateBefore =
    opts.lateBefore !== undefined
      ? opts.lateBefore
      : lateHorizon(watermark, compiled.timing.allowedLatenessMs);
  const { spec } = compiled;
  const contract = contractChecker(spec, opts.columns);
  const eventColumn = spec.eventTime?.column;
  const dedupColumns = spec.dedupe?.key;

  const outcomes = emptyOutcomes();
  const warnings: Record<string, number> = {};
  const failures = new Map<string, ExpectationFailure>();
  const deadLetters: DeadLetterRow[] = [];
  const candidates: {
    record: SourceRecord;
    seen: Partial<RowVerdict> | undefined;
    row: SinkRow;
    key: string | undefined;
    time: Date;
    behindWatermark: boolean;
    admitted: boolean;
  }[] = [];
  // Times as epoch ms: comparing Date objects with < converts both to numbers on every comparison.
  const maxEventMsByPartition = new Map<number, number>();
  const partitionsWithData = new Set<number>();
  let maxEventMs = -Infinity;
  let maxDedupMs = -Infinity;
  const lateBeforeMs = lateBefore ? lateBefore.getTime() : -Infinity;
  const watermarkMs = watermark ? watermark.getTime() : -Infinity;
  const drift = new DriftCollector();

  const yieldEvery = opts.yieldEvery ?? YIELD_EVERY;
  for (let i = 0; i < records.length; i++) {
    // Let other work on the event loop (the previous batch's commit, Kafka fetches, the console's
    // other requests) make progress; each row's expressions run in linear time (RE2, bounded CEL).
    if (i > 0 && i % yieldEvery === 0) {
      await new Promise((resolve) => setImmediate(resolve));
      opts.signal?.throwIfAborted();
    }
    const record = records[i]!;
    partitionsWithData.add(record.partition);
    const decoded = decodeJson(record);
    if (!decoded.ok) {
      outcomes.deadLetter++;
      deadLetters.push({ outcome: "dead_letter", reason: decoded.reason, record, payload: null });
      trace?.(record, { outcome: "dead_letter", reason: decoded.reason });
      continue;
    }
    const checked = contract.check(decoded.value);
    if (checked.kind !== "row") {
      const outcome = checked.kind === "quarantine" ? "quarantined" : "dead_letter";
      if (checked.kind === "quarantine" && checked.mismatch)
        drift.mismatch(
          checked.mismatch.field,
          checked.mismatch.declared,
          checked.mismatch.raw,
          decoded.value,
          record,
        );
      outcomes[checked.kind === "quarantine" ? "quarantined" : "deadLetter"]++;
      deadLetters.push({ outcome, reason: checked.reason, record, payload: decoded.value });
      trace?.(record, { outcome, reason: checked.reason, values: decoded.value });
      continue;
    }
    const { row } = checked;
    if (checked.rescued) drift.rescued(checked.rescued, decoded.value, record);
    const eventTime = eventColumn ? (row[eventColumn] as Date | null) : null;
    const eventMs = eventTime ? eventTime.getTime() : NaN;
    if (eventTime) {
      if (eventMs > maxEventMs) maxEventMs = eventMs;
      const partitionMax = maxEventMsByPartition.get(record.partition);
      if (partitionMax === undefined || eventMs > partitionMax)
        maxEventMsByPartition.set(record.partition, eventMs);
    }

    const cel = compiled.expectations.length > 0 || compiled.filter ? compiled.toCelRow(row) : undefined;
    let droppedBy: string | undefined;
    const verdicts: RowVerdict["expectations"] = trace ? [] : undefined;
    for (const e of compiled.expectations) {
      const passed = e.test(cel!);
      verdicts?.push({ name: e.name, action: e.action, passed });
      if (passed) continue;
      if (e.action === "warn") warnings[e.name] = (warnings[e.name] ?? 0) + 1;
      else if (e.action === "fail") {
        const f = failures.get(e.name) ?? { rule: e.name, rowCount: 0, samples: [] };
        f.rowCount++;
        if (f.samples.length < MAX_FAILURE_SAMPLES)
          f.samples.push({ ...decoded.value, _partition: record.partition, _offset: record.offset });
        failures.set(e.name, f);
      } else droppedBy ??= e.name;
    }
    const seen = trace
      ? {
          values: row,
          rescued: checked.rescued,
          ...(verdicts && verdicts.length > 0 ? { expectations: verdicts } : {}),
        }
      : undefined;
    if (droppedBy) {
      outcomes.dropped[droppedBy] = (outcomes.dropped[droppedBy] ?? 0) + 1;
      trace?.(record, {
        ...seen,
        outcome: "dropped",
        droppedBy,
        reason: `dropped by expectation "${droppedBy}"`,
      });
      continue;
    }
    if (compiled.filter && !compiled.filter.test(cel!)) {
      outcomes.filtered++;
      trace?.(record, { ...seen, outcome: "filtered", reason: "transform.filter is false" });
      continue;
    }
    const admitted = opts.admitted?.has(record) ?? false;
    if (eventTime && eventMs < lateBeforeMs && !admitted) {
      outcomes.late++;
      if (spec.lateData === "deadLetter") {
        const lateness =
          lateBefore && watermark && lateBefore < watermark
            ? ` minus allowedLateness (${lateBefore.toISOString()})`
            : "";
        const reason =
          opts.lateBefore !== undefined
            ? `event time ${eventTime.toISOString()} is behind every output's horizon (watermark minus allowedLateness, ${lateBefore!.toISOString()} at the latest)`
            : `event time ${eventTime.toISOString()} is behind the watermark ${watermark!.toISOString()}${lateness}`;
        deadLetters.push({ outcome: "late", reason, record, payload: decoded.value });
      }
      trace?.(record, {
        ...seen,
        outcome: "late",
        reason: `event time ${eventTime.toISOString()} is behind the watermark${spec.lateData === "deadLetter" ? " (dead letter)" : " (dropped, counted)"}`,
      });
      continue;
    }
    const timeMs = eventTime ? eventMs : record.timestamp;
    if (timeMs > maxDedupMs) maxDedupMs = timeMs;
    candidates.push({
      record,
      seen,
      row: {
        values: row,
        rescued: checked.rescued,
        partition: record.partition,
        offset: record.offset,
        ingestTimeMs: record.timestamp,
        record,
      },
      key: dedupColumns ? dedupKey(row, dedupColumns) : undefined,
      time: eventTime ?? new Date(record.timestamp),
      behindWatermark: eventTime !== null && eventMs < watermarkMs,
      admitted,
    });
  }

  const sinkRows: SinkRow[] = [];
  const dedupInserts: { key: string; time: Date }[] = [];
  let lateAccepted = 0;
  if (dedupColumns) {
    const seen = await opts.lookupSeenKeys([...new Set(candidates.map((c) => c.key!))]);
    for (const c of candidates) {
      if (c.admitted) {
        sinkRows.push(c.row);
        trace?.(c.record, { ...c.seen, outcome: "sink", dedupKey: c.key! });
        continue;
      }
      if (seen.has(c.key!)) {
        outcomes.duplicate++;
        trace?.(c.record, {
          ...c.seen,
          outcome: "duplicate",
          dedupKey: c.key!,
          reason: `dedupe key ${c.key} was seen before`,
        });
        continue;
      }
      seen.add(c.key!);
      dedupInserts.push({ key: c.key!, time: c.time });
      sinkRows.push(c.row);
      if (c.behindWatermark) lateAccepted++;
      trace?.(c.record, {
        ...c.seen,
        outcome: "sink",
        dedupKey: c.key!,
        ...(c.behindWatermark ? { lateAccepted: true } : {}),
      });
    }
  } else {
    for (const c of candidates) {
      sinkRows.push(c.row);
      if (c.behindWatermark) lateAccepted++;
      trace?.(c.record, { ...c.seen, outcome: "sink", ...(c.behindWatermark ? { lateAccepted: true } : {}) });
    }
  }
  outcomes.sink = sinkRows.length;

  const maxEventTimeByPartition = new Map([...maxEventMsByPartition].map(([p, ms]) => [p, new Date(ms)]));
  const maxEventTime = maxEventMs > -Infinity ? new Date(maxEventMs) : null;
  const maxDedupTime = maxDedupMs > -Infinity ? new Date(maxDedupMs) : null;
  return {
    sinkRows,
    deadLetters,
    dedupInserts,
    outcomes,
    warnings,
    failures: [...failures.values()],
    maxEventTime,
    maxDedupTime,
    maxEventTimeByPartition,
    partitionsWithData,
    lateAccepted,
    ...(drift.size > 0 ? { drift: drift.result()! } : {}),
  };
}
