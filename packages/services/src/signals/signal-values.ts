// Freshness, completeness and correctness: three separate signals, never one health score. Each is a
// few numbers with a definition (docs/console.md, "Signals") and, where the spec sets one, a target.
import type { TResolvedTargets } from "@sluice/pipeline-spec";
import { backlogSeconds, partitionBacklog, type TOffsetSample } from "./offset-signals";
import type { TFlowTotals } from "./pipeline-flow";

export interface TFreshness {
  /** now − the newest committed event's own time (the checkpoint's max event time). */
  eventTimeAgeMs: number | null;
  /** now − the newest committed row's Kafka append time. */
  ingestAgeMs: number | null;
  newestEventTime: Date | null;
  newestIngestTime: Date | null;
  targetMs: number;
  /** Over target while input waits; false when caught up (a quiet topic is old, not late); null before any data. */
  overTarget: boolean | null;
}

export interface TCompleteness {
  /** Events on the topic not yet committed (newest offset samples). */
  backlog: number | null;
  /** Backlog ÷ the processing rate of the last 5 minutes; null when it does not drain. */
  backlogSeconds: number | null;
  /** Shares of the range's input rows. */
  lateShare: number | null;
  deadLetterShare: number | null;
  /** Partitions of the topic the version has not read anything from yet. */
  partitionsNotRead: number[];
  partitions: number;
}

export interface TCorrectness {
  /** Expectation violations (warn and drop) per input row in the range. */
  violationRate: number | null;
  violations: number;
  targetRate: number;
  overTarget: boolean | null;
  quarantinedShare: number | null;
  /** Batches in the range whose outcomes did not add up to their input (the engine commits none: 0). */
  unbalancedBatches: number;
}

const share = (n: number, of: number) => (of > 0 ? n / of : null);

export function freshnessOf(
  now: Date,
  newestEvent: Date | null,
  newestIngest: Date | null,
  backlog: number | null,
  targets: TResolvedTargets,
): TFreshness {
  const ingestAgeMs = newestIngest ? Math.max(0, now.getTime() - newestIngest.getTime()) : null;
  return {
    eventTimeAgeMs: newestEvent ? now.getTime() - newestEvent.getTime() : null,
    ingestAgeMs,
    newestEventTime: newestEvent,
    newestIngestTime: newestIngest,
    targetMs: targets.freshnessMs,
    overTarget: ingestAgeMs === null ? null : ingestAgeMs > targets.freshnessMs && (backlog ?? 0) > 0,
  };
}

export function completenessOf(
  totals: TFlowTotals,
  latest: TOffsetSample[],
  recentProcessingRate: number | null,
): TCompleteness {
  const backlog = latest.length > 0 ? latest.reduce((sum, s) => sum + partitionBacklog(s), 0) : null;
  return {
    backlog,
    backlogSeconds: backlogSeconds(backlog, recentProcessingRate),
    lateShare: share(totals.late, totals.inputRows),
    deadLetterShare: share(totals.deadLetter, totals.inputRows),
    partitionsNotRead: latest
      .filter((s) => s.committedOffset === null && s.latestOffset > 0)
      .map((s) => s.partition)
      .sort((a, b) => a - b),
    partitions: latest.length,
  };
}

export function correctnessOf(totals: TFlowTotals, targets: TResolvedTargets): TCorrectness {
  const violations = Object.values(totals.violations).reduce((a, b) => a + b, 0);
  const violationRate = share(violations, totals.inputRows);
  return {
    violationRate,
    violations,
    targetRate: targets.violationRate,
    overTarget: violationRate === null ? null : violationRate > targets.violationRate,
    quarantinedShare: share(totals.quarantined, totals.inputRows),
    unbalancedBatches: totals.unbalancedBatches,
  };
}
