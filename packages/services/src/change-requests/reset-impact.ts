// What a checkpoint reset will do, decided before anyone approves it (pure: offsets in, verdict out).
// Per partition: where the checkpoint is, where it would be, and how many events are re-read
// (rewind) or never read (skip). Then whether the result stays right, by what the pipeline keeps:
//  - an append ledger (rows keyed, no windows or CDC): re-read events meet their own keys and are
//    counted as duplicates — a rewind is harmless, kept or cleared state alike;
//  - a windowed aggregate: its window state already holds the rewound events, so re-reading them
//    with the state kept counts them twice; clearing state only rebuilds correctly from the start of
//    the topic (windows that began before a mid-way point would be recomputed from part of their events);
//  - CDC history: the same for cleared state; kept state treats re-read changes as stale (harmless);
//  - dedup state kept on anything else: every re-read event is a "duplicate", so nothing is reprocessed.
import { z } from "zod";

export const ZResetTarget = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("earliest") }),
  z.object({ kind: z.literal("latest") }),
  z.object({
    kind: z.literal("timestamp"),
    at: z.coerce.date({ error: "at: give a date and time, e.g. 2026-12-01T10:00:00Z" }),
  }),
  z.object({
    kind: z.literal("offsets"),
    offsets: z
      .record(
        z.string().regex(/^\d+$/, 'partition numbers are whole numbers, e.g. "0"'),
        z.number().int().min(0, "an offset is 0 or more"),
      )
      .refine((o) => Object.keys(o).length > 0, "name at least one partition's offset"),
  }),
]);
export type TResetTarget = z.infer<typeof ZResetTarget>;
export const ZResetState = z.enum(["keep", "clear"]);
export type TResetState = z.infer<typeof ZResetState>;

/** What of the spec decides whether a reset keeps the result right. */
export interface TResetShape {
  aggregate: boolean;
  cdc: boolean;
  dedupe: boolean;
  webhook: boolean;
}

export interface TPartitionImpact {
  partition: number;
  current: number;
  target: number;
  low: number;
  high: number;
  /** Events read again (target before the checkpoint). */
  reprocessed: number;
  /** Events never read (target after the checkpoint). */
  skipped: number;
  warning: string | null;
}

export interface TResetImpact {
  partitions: TPartitionImpact[];
  reprocessed: number;
  skipped: number;
  /** What happens to the result, in words (shown before approval). */
  result: string;
  warnings: string[];
  /** Non-empty: the reset would make the result wrong (or cannot be done); it is refused with these. */
  refusals: string[];
}

/** A reset acts on the whole pipeline: with several outputs, on what any of them keeps. */
export function shapeOfSpec(spec: unknown): TResetShape {
  type TResult = { aggregate?: unknown; cdc?: unknown; sink?: { webhook?: unknown } };
  const s = (spec ?? {}) as TResult & { dedupe?: unknown; outputs?: Record<string, TResult>; join?: unknown };
  const results: TResult[] = s.outputs ? Object.values(s.outputs) : [s];
  return {
    aggregate: results.some((r) => r.aggregate != null),
    cdc: results.some((r) => r.cdc != null),
    dedupe: s.dedupe != null,
    webhook: results.some((r) => r.sink?.webhook != null),
  };
}

export function resetImpact(input: {
  shape: TResetShape;
  target: TResetTarget;
  state: TResetState;
  /** The checkpoint's next offset per partition (absent: not read yet → its log start). */
  checkpoint: Record<string, number>;
  bounds: { partition: number; low: number; high: number }[];
  /** For a timestamp target: the first offset at or after it, per partition. */
  byTime?: Record<number, number>;
}): TResetImpact {
  const { shape, target, state } = input;
  const refusals: string[] = [];
  const warnings: string[] = [];
  const known = new Set(input.bounds.map((b) => b.partition));
  if (target.kind === "offsets") {
    for (const p of Object.keys(target.offsets))
      if (!known.has(Number(p)))
        refusals.push(`partition ${p} does not exist: the topic has partitions ${[...known].join(", ")}`);
  }
  const partitions = input.bounds.map((b): TPartitionImpact => {
    const current = input.checkpoint[String(b.partition)] ?? b.low;
    let t: number;
    let warning: string | null = null;
    switch (target.kind) {
      case "earliest":
        t = b.low;
        break;
      case "latest":
        t = b.high;
        break;
      case "timestamp":
        t = input.byTime?.[b.partition] ?? b.high;
        if (t <= b.low && b.low > 0)
          warning = `the time is at or before partition ${b.partition}'s log start (offset ${b.low}): older events are gone (retention) and are not re-read`;
        break;
      case "offsets": {
        const asked = target.offsets[String(b.partition)];
        t = asked ?? current;
        if (asked !== undefined && asked > b.high)
          refusals.push(
            `partition ${b.partition}: offset ${asked} is past the log end ${b.high}; choose at most ${b.high} (or "latest")`,
          );
        if (asked !== undefined && asked < b.low)
          refusals.push(
            `partition ${b.partition}: offset ${asked} is before the log start ${b.low}: those events are gone (retention); choose at least ${b.low} (or "earliest")`,
          );
        break;
      }
    }
    const reprocessed = Math.max(0, current - Math.max(t, b.low));
    const skipped = Math.max(0, t - current);
    if (skipped > 0)
      warning = [
        warning,
        `${skipped} event(s) on partition ${b.partition} are skipped: they never reach the sink`,
      ]
        .filter(Boolean)
        .join("; ");
    return {
      partition: b.partition,
      current,
      target: Math.min(Math.max(t, b.low), b.high),
      low: b.low,
      high: b.high,
      reprocessed,
      skipped,
      warning,
    };
  });
  const reprocessed = partitions.reduce((n, p) => n + p.reprocessed, 0);
  const skipped = partitions.reduce((n, p) => n + p.skipped, 0);
  const rewinds = reprocessed > 0;
  const fromStart = partitions.every((p) => p.target === p.low && p.low === 0);
  let result: string;

  if (shape.aggregate) {
    if (rewinds && state === "keep")
      refusals.push(
        `rewinding a windowed aggregate while keeping its window state double counts: the ${reprocessed} re-read event(s) are already in their windows. Clear the state and reset to earliest to rebuild, or do not rewind.`,
      );
    else if (rewinds && !fromStart)
      refusals.push(
        `a windowed aggregate with cleared state can only be rebuilt from the start of the topic (earliest, log start 0): windows that began before the reset point would be recomputed from part of their events.`,
      );
    result = rewinds
      ? "the window state is cleared and every window is rebuilt from the start of the topic"
      : skipped > 0
        ? "windows miss the skipped events"
        : "nothing changes";
  } else if (shape.cdc) {
    if (rewinds && state === "clear" && !fromStart)
      refusals.push(
        `CDC history with cleared state can only be rebuilt from the start of the topic (earliest, log start 0): changes before the reset point would be missing from the history.`,
      );
    result = rewinds
      ? state === "keep"
        ? "re-read changes are older than or equal to what the CDC state holds: they are counted as stale and change nothing"
        : "the CDC state is cleared and the history rebuilt from the start of the topic"
      : skipped > 0
        ? "the skipped changes never reach the table"
        : "nothing changes";
  } else if (shape.webhook) {
    if (rewinds && state === "keep" && shape.dedupe)
      refusals.push(
        `keeping the dedup state makes every re-read event a "duplicate": nothing would be re-sent. Clear the state to re-send (the delivery ledger still never sends a delivered key twice).`,
      );
    result = rewinds
      ? "re-read events are sent again only for keys the delivery ledger has not delivered (never twice per key)"
      : skipped > 0
        ? "the skipped events are never sent"
        : "nothing changes";
  } else {
    // An append ledger: its primary key absorbs the replays.
    result = rewinds
      ? `harmless for an append ledger: its key absorbs the ${reprocessed} re-read event(s) (counted as duplicates), kept or cleared state alike`
      : skipped > 0
        ? "the skipped events never reach the ledger"
        : "nothing changes";
  }
  if (!rewinds && skipped === 0 && refusals.length === 0)
    warnings.push("the checkpoint is already there: the reset changes no offset");
  for (const p of partitions) if (p.warning) warnings.push(p.warning);
  return { partitions, reprocessed, skipped, result, warnings, refusals };
}
