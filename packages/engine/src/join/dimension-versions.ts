// A dimension entity's versions, ordered by the event time of the change that made each one: a version
// is valid from its change's event time until the next version's. Pure: merging a change into a key's
// versions and finding the version valid at a row's event time. Changes arrive in any order (shuffled,
// across partitions, repeated): a change lands where its event time puts it, so the versions end the
// same whatever the arrival order — except between two changes with the same event time, which
// sequenceBy decides (the higher wins; without it, the later arrival).
import type { SequenceType } from "../cdc/sequence";

export interface DimensionVersion {
  validFromMs: number;
  /** The change's sequenceBy value in canonical text (null without sequenceBy). */
  sequence: string | null;
  deleted: boolean;
  /** The change's fields as JSON values (timestamps ISO text, decimals text). */
  values: Record<string, unknown>;
}

export type MergeResult = "added" | "replaced" | "repeat";

/**
 * Puts `change` into `versions` (sorted by validFromMs, modified in place). A change with the same
 * event time as a stored version replaces it when its sequence is higher (or, without sequenceBy,
 * always: a later arrival of a change at the same instant is the newer statement), and is a repeat
 * when its sequence is equal or lower.
 */
export function mergeChange(
  versions: DimensionVersion[],
  change: DimensionVersion,
  seq: SequenceType | undefined,
): MergeResult {
  let lo = 0;
  let hi = versions.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (versions[mid]!.validFromMs < change.validFromMs) lo = mid + 1;
    else hi = mid;
  }
  const same = versions[lo];
  if (same && same.validFromMs === change.validFromMs) {
    const newer =
      !seq || same.sequence === null || change.sequence === null
        ? !sameVersion(same, change)
        : seq.compare(change.sequence, same.sequence) > 0;
    if (!newer) return "repeat";
    versions[lo] = change;
    return "replaced";
  }
  versions.splice(lo, 0, change);
  return "added";
}

/** The version valid at `atMs`: the latest one starting at or before it (a delete means none). */
export function versionAt(versions: readonly DimensionVersion[], atMs: number): DimensionVersion | undefined {
  let lo = 0;
  let hi = versions.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (versions[mid]!.validFromMs <= atMs) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? undefined : versions[lo - 1];
}

function sameVersion(a: DimensionVersion, b: DimensionVersion): boolean {
  return (
    a.deleted === b.deleted &&
    a.sequence === b.sequence &&
    JSON.stringify(a.values) === JSON.stringify(b.values)
  );
}

/** Bytes a version counts in state: its key, values and sequence as stored. */
export function versionBytes(entityKey: string, v: DimensionVersion): number {
  return (
    Buffer.byteLength(entityKey) + Buffer.byteLength(JSON.stringify(v.values)) + (v.sequence?.length ?? 0) + 9
  );
}
