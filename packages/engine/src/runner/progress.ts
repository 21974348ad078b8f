// Building the per-batch progress record (its schema and type: store/progress-record.ts), stored in
// batch_log and shown by `sluice status` and the console.
import type { OutcomeCounts } from "../batch/outcomes";
import type { PartitionEventTime } from "../batch/partition-watermark";
import type { OperatorReport } from "../operator/result-operator";
import type { OffsetRange, PartitionOffsets } from "../source/source";
import { latencyPercentiles } from "./latency";
import type { JoinReport } from "../join/join-operator";
import type { OutputProgress } from "../output/output-progress";
import type { BatchProgress } from "../store/progress-record";

export interface PhaseDurations {
  plan: number;
  read: number;
  process: number;
  commit: number;
}

export interface ProgressInput {
  batchId: number;
  pipelineVersionId: string;
  ranges: OffsetRange[];
  partitions: PartitionOffsets[];
  skippedOffsets: Record<string, number>;
  inputRows: number;
  phases: PhaseDurations;
  /**
   * The batch's wall time, from its trigger to its commit. For a batch read ahead it is less than the
   * sum of the phases (its read and process overlapped the previous commit); rates use it.
   */
  wallMs?: number;
  /** Milliseconds since the previous batch started (for the input rate); undefined for the first. */
  sincePreviousTriggerMs: number | undefined;
  watermark: Date | null;
  eventTimeMax: Date | null;
  state: { rows: number; bytes: number };
  outcomes: OutcomeCounts;
  warnings: Record<string, number>;
  replayed: boolean;
  deadLetterReplay?: { replayIds: number[]; rows: number };
  preparedAhead?: boolean;
  /** A partition group's batch: which group of how many. */
  group?: { no: number; of: number };
  now: Date;
  lateAccepted?: number;
  partitionEventTime?: PartitionEventTime[];
  operator?: OperatorReport;
  /** The batch's rows' Kafka timestamps, sorted (latency.ts `sortedIngestTimes`), for latency and freshness. */
  sortedIngest?: Float64Array;
  outputs?: OutputProgress[];
  join?: JoinReport;
}

const perSecond = (rows: number, ms: number) => (ms > 0 ? Math.round((rows * 1000) / ms) : 0);

export function buildProgress(p: ProgressInput): BatchProgress {
  const latest = new Map(p.partitions.map((x) => [x.partition, x.high]));
  const total = p.wallMs ?? p.phases.plan + p.phases.read + p.phases.process + p.phases.commit;
  const expectations: Record<string, number> = { ...p.warnings };
  for (const [name, n] of Object.entries(p.outcomes.dropped))
    expectations[name] = (expectations[name] ?? 0) + n;
  const latency = p.sortedIngest ? latencyPercentiles(p.sortedIngest, p.now.getTime()) : null;
  return {
    batchId: p.batchId,
    pipelineVersionId: p.pipelineVersionId,
    timestamp: p.now.toISOString(),
    inputRows: p.inputRows,
    inputRowsPerSecond: perSecond(p.inputRows, p.sincePreviousTriggerMs ?? total),
    processedRowsPerSecond: perSecond(p.inputRows, total),
    durationMs: { ...p.phases, total },
    sources: p.ranges.map((r) => ({
      partition: r.partition,
      startOffset: r.from,
      endOffset: r.to,
      latestOffset: latest.get(r.partition) ?? r.to,
    })),
    backlog: p.ranges.reduce((sum, r) => sum + Math.max(0, (latest.get(r.partition) ?? r.to) - r.to), 0),
    skippedOffsets: p.skippedOffsets,
    watermark: p.watermark?.toISOString() ?? null,
    eventTimeMax: p.eventTimeMax?.toISOString() ?? null,
    stateRows: p.state.rows,
    stateBytes: p.state.bytes,
    outcomes: p.outcomes,
    expectations,
    replayed: p.replayed,
    ...(p.deadLetterReplay ? { deadLetterReplay: p.deadLetterReplay } : {}),
    ...(p.group ? { group: p.group } : {}),
    ...(p.preparedAhead ? { preparedAhead: true } : {}),
    ...(p.lateAccepted ? { lateAccepted: p.lateAccepted } : {}),
    ...(p.partitionEventTime && p.partitionEventTime.length > 0
      ? { partitionEventTime: p.partitionEventTime }
      : {}),
    ...(p.operator ? { operator: p.operator } : {}),
    ...(p.outputs ? { outputs: p.outputs } : {}),
    ...(p.join ? { join: p.join } : {}),
    ...(latency
      ? {
          latencyMs: latency,
          ingestTimeMax: new Date(p.sortedIngest![p.sortedIngest!.length - 1]!).toISOString(),
        }
      : {}),
  };
}

/** One line per batch for the CLI and logs. */
export function formatProgressLine(p: BatchProgress): string {
  const o = p.outcomes;
  const dropped = Object.values(o.dropped).reduce((a, b) => a + b, 0);
  return (
    `batch ${p.batchId}${p.group ? ` (group ${p.group.no} of ${p.group.of})` : ""}${p.replayed ? " (replayed plan)" : ""}${p.deadLetterReplay ? ` (dead-letter replay #${p.deadLetterReplay.replayIds.join(", #")})` : ""}: ${p.inputRows} rows in ${p.durationMs.total} ms ` +
    `(${p.processedRowsPerSecond}/s) → sink ${o.sink}, duplicate ${o.duplicate}, dropped ${dropped}, filtered ${o.filtered}, ` +
    `quarantined ${o.quarantined}, dead letter ${o.deadLetter}, late ${o.late}${p.lateAccepted ? ` (+${p.lateAccepted} late accepted)` : ""}` +
    `${o.stale ? `, stale ${o.stale}` : ""} | backlog ${p.backlog} | ` +
    `watermark ${p.watermark ?? "-"} | state ${p.stateRows} rows` +
    (p.join
      ? ` | join: ${p.join.joined} joined, ${p.join.joinedAtBound} at bound, ${p.join.missing} missing, ${p.join.deadLettered} dimension_missing, ${p.join.waiting} waiting`
      : "") +
    (p.outputs && (p.outputs.length > 1 || p.outputs[0]?.name)
      ? (p.outputs ?? [])
          .map((out) => ` | ${out.name}: sink ${out.outcomes.sink}, late ${out.outcomes.late}`)
          .join("")
      : "")
  );
}
