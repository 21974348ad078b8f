// Input rate and backlog from the workers' offset samples (offset_samples): the topic's log end and the
// version's committed offset per partition, sampled whether batches run or not. So a paused pipeline's
// backlog keeps rising on the chart, and the input rate is what arrives on the topic — not what the
// pipeline managed to read.

export interface TOffsetSample {
  t: Date;
  partition: number;
  sampledAt: Date;
  latestOffset: number;
  /** null before the version read the partition: everything retained is backlog, counted from 0. */
  committedOffset: number | null;
}

export interface TOffsetPoint {
  t: Date;
  /** Events per second appended to the topic since the previous sample (all partitions); null without two samples. */
  inputRate: number | null;
  /** Events on the topic not yet committed by the version, at the bucket's last sample. */
  backlog: number | null;
  /** Per partition: backlog at the bucket's last sample. */
  partitions: Record<number, number>;
}

/** A sample as the offset queries return it (rollup-queries.ts), in the shape these functions take. */
export const sampleOf = (o: {
  t: Date;
  partition: number;
  sampled_at: Date;
  latest_offset: number;
  committed_offset: number | null;
}): TOffsetSample => ({
  t: o.t,
  partition: o.partition,
  sampledAt: o.sampled_at,
  latestOffset: o.latest_offset,
  committedOffset: o.committed_offset,
});

/** Backlog of one partition at a sample. */
export const partitionBacklog = (s: Pick<TOffsetSample, "latestOffset" | "committedOffset">): number =>
  Math.max(0, s.latestOffset - (s.committedOffset ?? 0));

/** One point per bucket that has samples, oldest first. Samples must be the last per (bucket, partition). */
export function offsetPoints(samples: TOffsetSample[]): TOffsetPoint[] {
  const byBucket = new Map<number, TOffsetSample[]>();
  for (const s of samples) {
    const list = byBucket.get(s.t.getTime()) ?? [];
    list.push(s);
    byBucket.set(s.t.getTime(), list);
  }
  const previous = new Map<number, TOffsetSample>();
  const points: TOffsetPoint[] = [];
  for (const t of [...byBucket.keys()].sort((a, b) => a - b)) {
    let rate = 0;
    let measured = false;
    let backlog = 0;
    const partitions: Record<number, number> = {};
    for (const s of byBucket.get(t)!) {
      const before = previous.get(s.partition);
      const seconds = before ? (s.sampledAt.getTime() - before.sampledAt.getTime()) / 1000 : 0;
      if (before && seconds > 0) {
        // A topic deleted and re-created starts again at 0: no negative rates.
        rate += Math.max(0, s.latestOffset - before.latestOffset) / seconds;
        measured = true;
      }
      partitions[s.partition] = partitionBacklog(s);
      backlog += partitions[s.partition]!;
      previous.set(s.partition, s);
    }
    points.push({ t: new Date(t), inputRate: measured ? rate : null, backlog, partitions });
  }
  return points;
}

/**
 * How long the backlog takes to drain at the recent processing rate; null when nothing is processed
 * (paused, stopped, failed or stuck: it does not drain at all), 0 without backlog.
 */
export function backlogSeconds(backlog: number | null, processingRate: number | null): number | null {
  if (backlog === null) return null;
  if (backlog === 0) return 0;
  return processingRate && processingRate > 0 ? backlog / processingRate : null;
}
