// Apply-changes logic, pure: which changes of a batch are applied, which are stale, and what the
// target rows become. Per entity key, the applied changes are "points" ordered by sequence:
//   SCD1 keeps the newest point only — a change whose sequence is not newer is stale, never applied;
//   SCD2 keeps every point — an older change arriving late is inserted into history where its
//   sequence puts it (an exact repeat of a sequence is stale). Each upsert point is a version,
//   valid from its sequence to the next point's (an update or a delete), current when none follows.
// So shuffled changes end in the same table as changes applied in sequence order.
import type { SequenceType } from "./sequence";

export interface Point {
  sequence: string;
  deleted: boolean;
}

export interface Change<R> extends Point {
  row: R;
}

export interface Scd1Outcome<R> {
  /** The change the key's row now reflects, when the batch moved it forward. */
  winner?: Change<R>;
  stale: number;
}

export function applyScd1<R>(
  stored: Point | undefined,
  changes: Change<R>[],
  seq: SequenceType,
): Scd1Outcome<R> {
  let winner: Change<R> | undefined;
  let stale = 0;
  // In sequence order (a stable sort: of two changes with one sequence, the first to arrive counts).
  // Changes older than the batch's winner are applied in order and superseded — not stale.
  for (const c of [...changes].sort((a, b) => seq.compare(a.sequence, b.sequence))) {
    const notNewer =
      (stored && seq.compare(c.sequence, stored.sequence) <= 0) ||
      (winner && seq.compare(c.sequence, winner.sequence) === 0);
    if (notNewer) stale++;
    else winner = c;
  }
  return { ...(winner ? { winner } : {}), stale };
}

export interface Version {
  sequence: string;
  validTo: string | null;
}

export interface Scd2Outcome<R> {
  /** Newly applied points (inserted into state). */
  added: Change<R>[];
  /** New versions (upsert points) to insert, with their valid_to. */
  inserts: (Version & { row: R })[];
  /** Existing versions whose valid_to changed because a point landed after them. */
  updates: Version[];
  stale: number;
}

export function applyScd2<R>(stored: Point[], changes: Change<R>[], seq: SequenceType): Scd2Outcome<R> {
  const known = new Set(stored.map((p) => p.sequence));
  const added: Change<R>[] = [];
  let stale = 0;
  for (const c of changes) {
    if (known.has(c.sequence)) {
      stale++;
      continue;
    }
    known.add(c.sequence);
    added.push(c);
  }
  const byOrder = (a: Point, b: Point) => seq.compare(a.sequence, b.sequence);
  const before = validTos([...stored].sort(byOrder));
  const all: (Point & { row?: R })[] = [...stored, ...added].sort(byOrder);
  const after = validTos(all);
  const inserts: Scd2Outcome<R>["inserts"] = [];
  const updates: Version[] = [];
  for (const p of all) {
    if (p.deleted) continue;
    const validTo = after.get(p.sequence)!;
    if (p.row !== undefined) inserts.push({ sequence: p.sequence, validTo, row: p.row });
    else if (before.get(p.sequence) !== validTo) updates.push({ sequence: p.sequence, validTo });
  }
  return { added, inserts, updates, stale };
}

/** valid_to of each upsert point: the next point's sequence, or null (current). */
function validTos(sorted: Point[]): Map<string, string | null> {
  const out = new Map<string, string | null>();
  sorted.forEach((p, i) => {
    if (!p.deleted) out.set(p.sequence, sorted[i + 1]?.sequence ?? null);
  });
  return out;
}

// State eviction (cdc.stateEviction: watermark). A change behind the late horizon (watermark −
// allowedLateness) is late and never reaches the operator. So once a point's event time is behind it,
// and — the precondition the spec declares — event time orders a key's changes as the sequence does,
// no change that could still arrive sequences at or before that point: it would be at least as old.
// The point is then needed only as the key's predecessor of a newer change, which closes it (SCD2) or
// is compared with it (SCD1) — unless the key was deleted (nothing to close, nothing to resurrect) or a
// later point, itself behind the horizon, has taken its place.

export interface TimedPoint extends Point {
  /** Event time of the change, epoch ms; null when the pipeline has no eventTime (never evicted). */
  eventTime: number | null;
}

/**
 * For a key's points in sequence order: the time the horizon must pass for each to leave the state, or
 * null for never. A delete: its own event time. A point followed by another: the later of both event
 * times. The newest point, when not a delete: never (a newer change would need it).
 */
export function evictionTimes(sorted: readonly TimedPoint[]): (number | null)[] {
  return sorted.map((p, i) => {
    if (p.eventTime === null) return null;
    if (p.deleted) return p.eventTime;
    const next = sorted[i + 1];
    if (!next) return null;
    return next.eventTime === null ? null : Math.max(p.eventTime, next.eventTime);
  });
}

export interface StoredPoint extends TimedPoint {
  /** Epoch ms the late horizon must pass for the point to leave the state; null: never (evictionTimes). */
  evictAfter: number | null;
}

/**
 * A key's points once a batch applied `fresh` ones, with their eviction times: the points to insert,
 * and the stored points to rewrite because their eviction time changed (a point now follows them).
 */
export function placePoints(
  stored: readonly StoredPoint[],
  fresh: readonly TimedPoint[],
  seq: SequenceType,
): { insert: StoredPoint[]; rewrite: StoredPoint[] } {
  const all = [
    ...stored.map((point) => ({ point, stored: true })),
    ...fresh.map((point) => ({ point, stored: false })),
  ].sort((a, b) => seq.compare(a.point.sequence, b.point.sequence));
  const times = evictionTimes(all.map((x) => x.point));
  const insert: StoredPoint[] = [];
  const rewrite: StoredPoint[] = [];
  all.forEach(({ point, stored: wasStored }, i) => {
    const placed = {
      sequence: point.sequence,
      deleted: point.deleted,
      eventTime: point.eventTime,
      evictAfter: times[i]!,
    };
    if (!wasStored) insert.push(placed);
    else if ((point as StoredPoint).evictAfter !== placed.evictAfter) rewrite.push(placed);
  });
  return { insert, rewrite };
}

/**
 * Changes of this batch whose event time disagrees with their sequence against the key's other points
 * or changes (a newer sequence with an older event time, or the reverse): evidence that the eviction
 * precondition does not hold for this feed.
 */
export function orderViolations(
  stored: readonly TimedPoint[],
  changes: readonly TimedPoint[],
  seq: SequenceType,
): number {
  const all = [...stored.map((p) => ({ p, mine: false })), ...changes.map((p) => ({ p, mine: true }))].filter(
    (x) => x.p.eventTime !== null,
  );
  let count = 0;
  for (const c of all) {
    if (!c.mine) continue;
    const disagrees = all.some(({ p }) => {
      const order = seq.compare(c.p.sequence, p.sequence);
      return order !== 0 && Math.sign(c.p.eventTime! - p.eventTime!) === -order;
    });
    if (disagrees) count++;
  }
  return count;
}
