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

export function applyScd1<R>(stored: Point | undefined, changes: Change<R>[], seq: SequenceType): Scd1Outcome<R> {
  let winner: Change<R> | undefined;
  let stale = 0;
  // In sequence order (a stable sort: of two changes with one sequence, the first to arrive counts).
  // Changes older than the batch's winner are applied in order and superseded — not stale.
  for (const c of [...changes].sort((a, b) => seq.compare(a.sequence, b.sequence))) {
    const notNewer = (stored && seq.compare(c.sequence, stored.sequence) <= 0) || (winner && seq.compare(c.sequence, winner.sequence) === 0);
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
