// Where a join's dimension comes from, as the join operator sees it: per batch, the new changes and the
// dimension's watermark (read), whether a batch should run for it alone (hasUnread), and — when the
// versions live outside the join's own state — the versions of some keys. Two feeds: a changelog topic
// the pipeline reads itself (dimension-reader.ts, versions kept in join_versions) and another pipeline's
// committed SCD2 history (pipeline-dimension-feed.ts, versions read from its table).
import type { SequenceType } from "../cdc/sequence";
import type { DimensionCheckpoint, DimensionRead } from "./dimension-reader";
import type { DimensionVersion } from "./dimension-versions";

export interface DimensionFeed {
  /** Orders two changes of a key at the same instant (undefined: the later arrival wins). */
  readonly sequence: SequenceType | undefined;
  /** `sourceTime`: the source's event time after this batch. */
  read(cp: DimensionCheckpoint, sourceTime: Date | null, now: Date): Promise<DimensionRead>;
  /** The dimension has something new this join has not used (a batch should run even without source input). */
  hasUnread(cp: DimensionCheckpoint): Promise<boolean>;
  /**
   * The versions of these entity keys, each list ordered by validFromMs, when the dimension keeps them
   * itself; absent: they are the join's own state (join_versions), built from the changes read.
   */
  versions?(keys: string[]): Promise<Map<string, DimensionVersion[]>>;
  close(): Promise<void>;
}
