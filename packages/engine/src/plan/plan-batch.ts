// Planning a micro-batch: which offsets of which partitions the next batch reads. Upholds "bounded
// input per batch": at most maxOffsetsPerTrigger offsets in total, spread over partitions in
// proportion to their backlog (as Spark does), so one hot partition cannot starve the others and a
// huge backlog drains in many bounded batches.
import type { OffsetRange, PartitionOffsets } from "../source/source";

export type StartingOffsets = "earliest" | "latest";

export interface PlanInput {
  /**
   * Next offset to read per partition, from the checkpoint: after the last committed batch, or where
   * the version started (`startingOffsets: latest`). A partition it does not name is read from its
   * earliest retained offset: never read, or added to the topic after the version started.
   */
  committedEnd: Record<string, number>;
  partitions: PartitionOffsets[];
  maxOffsetsPerTrigger: number;
}

export interface BatchPlan {
  ranges: OffsetRange[];
  /** Offsets retention deleted before we read them, per partition (data loss to report). */
  skipped: Record<string, number>;
}

/**
 * Where a version that has not read anything starts, to be recorded in its checkpoint before its first
 * plan: `latest` is the log end of every partition now, so a restart before the first batch still
 * starts there (and reads what arrived in between). `earliest` needs no record: a partition the
 * checkpoint does not name starts at its earliest offset.
 */
export function startingOffsets(
  starting: StartingOffsets,
  partitions: PartitionOffsets[],
): Record<string, number> | undefined {
  return starting === "latest"
    ? Object.fromEntries(partitions.map((p) => [String(p.partition), p.high]))
    : undefined;
}

export function startOffsetFor(
  p: PartitionOffsets,
  committedEnd: Record<string, number>,
): { from: number; skipped: number } {
  const committed = committedEnd[String(p.partition)];
  if (committed === undefined) return { from: p.low, skipped: 0 };
  if (committed < p.low) return { from: p.low, skipped: p.low - committed };
  return { from: Math.min(committed, p.high), skipped: 0 };
}

export function planBatch(input: PlanInput): BatchPlan {
  const starts = input.partitions.map((p) => ({ p, ...startOffsetFor(p, input.committedEnd) }));
  const backlogs = starts.map(({ p, from }) => Math.max(0, p.high - from));
  const total = backlogs.reduce((a, b) => a + b, 0);
  const cap = input.maxOffsetsPerTrigger;

  let takes: number[];
  if (total <= cap) {
    takes = backlogs;
  } else {
    // Proportional shares, rounded down, then the remainder to the largest backlogs.
    takes = backlogs.map((b) => Math.floor((b * cap) / total));
    let left = cap - takes.reduce((a, b) => a + b, 0);
    const order = backlogs.map((b, i) => ({ b, i })).sort((x, y) => y.b - x.b || x.i - y.i);
    for (const { i } of order) {
      if (left === 0) break;
      if (takes[i]! < backlogs[i]!) {
        takes[i]! += 1;
        left -= 1;
      }
    }
  }

  const skipped: Record<string, number> = {};
  const ranges = starts.map(({ p, from, skipped: s }, i) => {
    if (s > 0) skipped[String(p.partition)] = s;
    return { partition: p.partition, from, to: from + takes[i]! };
  });
  return { ranges, skipped };
}

/** Offsets not yet read after this plan: the backlog reported in progress. */
export function backlogAfter(ranges: OffsetRange[], partitions: PartitionOffsets[]): number {
  const end = new Map(ranges.map((r) => [r.partition, r.to]));
  return partitions.reduce((sum, p) => sum + Math.max(0, p.high - (end.get(p.partition) ?? p.high)), 0);
}
