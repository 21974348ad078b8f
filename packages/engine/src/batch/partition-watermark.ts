// Event time per partition (product.md semantics 4): Kafka orders events only inside a partition, so
// the watermark follows the slowest partition that is still sending — the minimum over active
// partitions of their max event time, minus watermarkDelay. A partition that has read no new records
// for `idleTimeout` (processing time) stops holding the watermark back; when every partition is idle
// the newest event time seen anywhere is used. The watermark itself never moves back (watermark.ts).

/** What the checkpoint keeps per partition (in `event_time_max.partitions`), as ISO timestamps. */
export interface PartitionClock {
  /** Highest event time read from the partition. */
  max: string;
  /** When (the runner's clock) a batch last read a record from the partition. */
  lastDataAt: string;
}

export type PartitionClocks = Record<string, PartitionClock>;

export interface PartitionEventTime {
  partition: number;
  eventTimeMax: string;
  lastDataAt: string;
  /** Idle partitions do not hold the watermark back. */
  idle: boolean;
}

/** The clocks after a batch: new maxima, and `lastDataAt = now` for every partition it read records from. */
export function advancePartitionClocks(
  previous: PartitionClocks | undefined,
  batch: { partitionsWithData: Iterable<number>; maxEventTimeByPartition: ReadonlyMap<number, Date> },
  now: Date,
): PartitionClocks {
  const next: PartitionClocks = { ...previous };
  const read = new Set(batch.partitionsWithData);
  for (const p of read) {
    const key = String(p);
    const batchMax = batch.maxEventTimeByPartition.get(p);
    const prev = next[key];
    const max = !prev ? batchMax : batchMax && batchMax > new Date(prev.max) ? batchMax : new Date(prev.max);
    // A partition whose records carried no event time yet (all malformed) has no clock to hold with.
    if (max) next[key] = { max: max.toISOString(), lastDataAt: now.toISOString() };
  }
  return next;
}

/**
 * The event time the watermark follows: min over active partitions, or max over all when all are idle.
 * `unread`: partitions known to hold records not read yet — another partition group's, whose runner
 * is behind or down (one runner reads every partition with records in each batch, so it has none).
 * They are never idle, and one without a clock yet could hold any event time: the watermark waits.
 */
export function combinedEventTime(
  clocks: PartitionClocks,
  now: Date,
  idleTimeoutMs: number,
  unread: ReadonlySet<number> = new Set(),
): { eventTime: Date | null; partitions: PartitionEventTime[] } {
  const partitions = Object.entries(clocks)
    .map(([p, c]) => ({
      partition: Number(p),
      eventTimeMax: c.max,
      lastDataAt: c.lastDataAt,
      idle: !unread.has(Number(p)) && now.getTime() - new Date(c.lastDataAt).getTime() > idleTimeoutMs,
    }))
    .sort((a, b) => a.partition - b.partition);
  if (partitions.length === 0 || [...unread].some((p) => !clocks[String(p)]))
    return { eventTime: null, partitions };
  const active = partitions.filter((p) => !p.idle);
  const times = (active.length > 0 ? active : partitions).map((p) => new Date(p.eventTimeMax).getTime());
  return { eventTime: new Date(active.length > 0 ? Math.min(...times) : Math.max(...times)), partitions };
}
