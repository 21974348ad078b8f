// What a join does with one row, from the dimension's versions of its key and two clocks: the
// dimension's watermark (has the dimension passed the row's time? then the version is final) and the
// source's event time (has the row waited waitFor?). Pure, so the rules are tested on their own.
import { versionAt, type DimensionVersion } from "./dimension-versions";

/** The reason a row the join could not enrich is dead-lettered with (`onMissing: deadLetter`); replay joins it again. */
export const DIMENSION_MISSING = "dimension_missing";

export type JoinDecision =
  /** The dimension's watermark passed the row's time: this is the version valid then, for good. */
  | { kind: "joined"; version: DimensionVersion }
  /** Waited waitFor; joined with the newest version known for its time (not confirmed by the dimension). */
  | { kind: "atBound"; version: DimensionVersion }
  /** No version at its time (none yet, deleted, or a null key), and the dimension passed it or the bound was reached. */
  | { kind: "missing"; why: string }
  | { kind: "wait" };

export interface JoinClocks {
  /** The dimension's watermark after this batch's changes (null: it has none yet). */
  dimensionWatermarkMs: number | null;
  /** The source's event time after this batch (null: none yet). */
  sourceTimeMs: number | null;
  waitForMs: number;
}

export function decideJoin(
  eventMs: number,
  versions: readonly DimensionVersion[] | undefined,
  keyIsNull: boolean,
  clocks: JoinClocks,
): JoinDecision {
  if (keyIsNull) return { kind: "missing", why: "its join key is null" };
  const confirmed = clocks.dimensionWatermarkMs !== null && clocks.dimensionWatermarkMs > eventMs;
  const expired = clocks.sourceTimeMs !== null && clocks.sourceTimeMs - eventMs >= clocks.waitForMs;
  if (!confirmed && !expired) return { kind: "wait" };
  const version = versions ? versionAt(versions, eventMs) : undefined;
  if (!version)
    return {
      kind: "missing",
      why: confirmed
        ? "the dimension has no version of its key at its event time"
        : "no version of its key arrived within waitFor",
    };
  if (version.deleted)
    return {
      kind: "missing",
      why: `its key was deleted from the dimension at ${new Date(version.validFromMs).toISOString()}`,
    };
  return confirmed ? { kind: "joined", version } : { kind: "atBound", version };
}
