// The per-kind checks of stateCompatibility (state-compatibility.ts): each reads the changes between
// two one-result specs (a pipeline with a top-level sink, or one output's view) and says which kind of
// state the next version cannot continue, and why.
import type { TSpecChange } from "./diff";
import { parseDuration } from "./duration";
import { formatMeasure, type TMeasure } from "./measure";
import type { TPipelineSpec, TSingleOutputSpec } from "./spec-schema";

export const STATE_KINDS = ["checkpoint", "sink", "dedup", "window", "cdc", "webhookLedger", "join"] as const;
/**
 * checkpoint: source offsets and watermark; sink: the result the checkpoint vouches for (its table,
 * key and mode); dedup, window, cdc: the operators' state; webhookLedger: deliveries, kept per pipeline;
 * join: the dimension's versions and offsets, and the rows waiting for it.
 */
export type TStateKind = (typeof STATE_KINDS)[number];

export interface Context {
  before: TSingleOutputSpec;
  after: TSingleOutputSpec;
  /** The change at exactly this path, if any. */
  at(path: string): TSpecChange | undefined;
  /** The changes at or under this path. */
  under(path: string): TSpecChange[];
  problem(state: TStateKind, change: TSpecChange, why: string): void;
  note(state: TStateKind, change: TSpecChange, why: string): void;
}

export function checkCheckpoint({ before, at, problem }: Context): void {
  const topic = at("source.kafka.topic");
  if (topic)
    problem("checkpoint", topic, `the checkpoint's offsets are positions in ${before.source.kafka.topic}`);
  const time = at("eventTime.column");
  if (time?.kind === "changed")
    problem(
      "checkpoint",
      time,
      `the checkpoint's watermark is a time of ${before.eventTime!.column}; rows would be judged late by another column against it`,
    );
}

export const resultKind = (s: TPipelineSpec): "aggregate" | "cdc" | "rows" =>
  s.aggregate ? "aggregate" : s.cdc ? "cdc" : "rows";
const RESULT_NAMES = { aggregate: "aggregate results", cdc: "CDC entities", rows: "rows" } as const;
const MODE_MEANING = {
  append: "once (the first row per key stays)",
  upsert: "in place (the last row per key wins)",
} as const;

/** False when the result or sink is another one altogether (the operators' state is then not compared). */
export function checkSink({ before, after, at, problem }: Context): boolean {
  const [was, now] = [resultKind(before), resultKind(after)];
  if (was !== now) {
    const change = at(was === "rows" ? now : was)!;
    problem(
      "sink",
      change,
      `the sink holds ${RESULT_NAMES[was]}, the next version would write ${RESULT_NAMES[now]}`,
    );
    return false;
  }
  const [a, b] = [before.sink.postgres, after.sink.postgres];
  if (!a !== !b) {
    const change = at(a ? "sink.postgres" : "sink.webhook")!;
    problem(
      "sink",
      change,
      `the checkpoint vouches for what ${a ? `table ${a.table}` : "the webhook"} received, and the next version would write elsewhere`,
    );
    return false;
  }
  if (!a || !b) return true;
  const table = at("sink.postgres.table");
  if (table) {
    problem("sink", table, `the checkpoint vouches for what ${a.table} holds; ${b.table} holds none of it`);
    return false;
  }
  const key = at("sink.postgres.key");
  if (key) problem("sink", key, `${a.table} identifies its rows by ${show(a.key)}`);
  const mode = at("sink.postgres.mode");
  if (mode)
    problem(
      "sink",
      mode,
      `the rows ${a.table} holds were written ${MODE_MEANING[a.mode]}, the next ones would be written ${MODE_MEANING[b.mode]}`,
    );
  return true;
}

export function checkDedup({ before, after, at, problem, note }: Context): void {
  const [was, now] = [before.dedupe, after.dedupe];
  if (!now) return;
  if (!was)
    return note(
      "dedup",
      at("dedupe")!,
      "events read before this version were not remembered, so a later duplicate of one is not caught",
    );
  const key = at("dedupe.key");
  if (key)
    return problem(
      "dedup",
      key,
      "the stored keys are values of the old columns, so a duplicate of an event already seen would not be found",
    );
  typeChanges(at, now.key).forEach((c) =>
    problem("dedup", c, "the stored dedup keys hold the old type's values"),
  );
  const within = at("dedupe.within");
  const shorter =
    was.within !== "watermark" &&
    now.within !== "watermark" &&
    parseDuration(now.within) < parseDuration(was.within);
  if (within && !shorter)
    note(
      "dedup",
      within,
      "keys the previous version already evicted stay evicted: until the new retention has passed, a duplicate of one is not caught",
    );
  checkLatenessNote({ before, after, at, note } as Context);
  const time = at("eventTime");
  if (time?.kind === "removed")
    note(
      "dedup",
      time,
      "the stored keys carry event times and new ones ingest times, so a stored key may be evicted sooner than dedupe.within after it was seen",
    );
}

/** With dedupe within the watermark, keys evicted under a shorter lateness stay evicted. */
export function checkLatenessNote({ after, at, note }: Pick<Context, "after" | "at" | "note">): void {
  const lateness = at("aggregate.allowedLateness");
  if (lateness && after.dedupe?.within === "watermark" && grew(lateness))
    note("dedup", lateness, "dedup keys evicted under the shorter lateness stay evicted");
}

export function checkWindows({ before, after, at, under, problem }: Context): void {
  const [was, now] = [before.aggregate, after.aggregate];
  if (!was || !now) return;
  const window = under("aggregate.window");
  if (window.length > 0)
    return window.forEach((c) =>
      problem(
        "window",
        c,
        `the stored state holds ${showWindow(was.window)} windows, the next version would use ${showWindow(now.window)}`,
      ),
    );
  const groupBy = at("aggregate.groupBy");
  if (groupBy) return problem("window", groupBy, `the stored state is grouped by ${show(was.groupBy)}`);
  typeChanges(at, now.groupBy).forEach((c) =>
    problem("window", c, "the stored group keys hold the old type's values"),
  );
  for (const name of Object.keys(now.measures).sort()) {
    const path = `aggregate.measures.${name}`;
    const [m, n] = [was.measures[name] as TMeasure | undefined, now.measures[name] as TMeasure];
    if (!m)
      problem(
        "window",
        at(path)!,
        `the open windows have no ${name} accumulator: their ${name} would count only rows from this version on`,
      );
    else if (formatMeasure(m) !== formatMeasure(n)) {
      problem(
        "window",
        { path, kind: "changed", before: formatMeasure(m), after: formatMeasure(n) },
        `the open windows' ${name} was folded by the old definition`,
      );
    } else if (n.column !== undefined) {
      typeChanges(at, [n.column]).forEach((c) =>
        problem("window", c, `the open windows' ${name} holds the old type's values`),
      );
    }
  }
  // Without a window, update and complete keep the same per-group state; they differ only in what they rewrite.
  const mode = at("aggregate.outputMode");
  const sameState = !now.window && was.outputMode !== "append" && now.outputMode !== "append";
  if (mode && !sameState) {
    problem(
      "window",
      mode,
      `windows the previous version already wrote ${was.outputMode === "append" ? "once, when final," : "while open"} would be written again ${now.outputMode === "append" ? "when final" : "as they change"}`,
    );
  }
  const lateness = at("aggregate.allowedLateness");
  if (lateness && grew(lateness)) {
    problem(
      "window",
      lateness,
      "windows the previous version finalized and evicted would be reopened by rows it called late, holding only those rows (update would overwrite a final result with a partial one; append would write it twice)",
    );
  }
}

export function checkCdc({ before, after, at, problem }: Context): void {
  const [was, now] = [before.cdc, after.cdc];
  if (!was || !now) return;
  const key = at("cdc.key");
  if (key) problem("cdc", key, `the applied changes are stored per ${show(was.key)} entity`);
  const sequence = at("cdc.sequenceBy");
  if (sequence)
    problem(
      "cdc",
      sequence,
      `the applied changes are ordered by ${was.sequenceBy}, so a change could not be told older or newer than them`,
    );
  const scd = at("cdc.scdType");
  if (scd)
    problem(
      "cdc",
      scd,
      "SCD1 keeps the newest change per key and SCD2 every version, in state and in the table",
    );
  if (!key && !sequence)
    typeChanges(at, [...now.key, now.sequenceBy]).forEach((c) =>
      problem("cdc", c, "the applied changes hold the old type's values"),
    );
}

export function checkWebhookLedger({ before, at, problem }: Context): void {
  const key = at("sink.webhook.idempotencyKey");
  if (key) {
    problem(
      "webhookLedger",
      key,
      `the delivery ledger (kept per pipeline, for every version) knows the rows already sent by their ${show(before.sink.webhook!.idempotencyKey)} values; sent again under another key, a receiver would apply them twice`,
    );
  }
}

/** Changes of the contract type of these fields. */
export function typeChanges(at: Context["at"], fields: readonly string[]): TSpecChange[] {
  return fields.flatMap((f) => at(`contract.fields.${f}.type`) ?? []);
}

export const grew = (c: TSpecChange) => parseDuration(c.after as string) > parseDuration(c.before as string);

export function describe(c: TSpecChange): string {
  if (c.kind === "added") return `${c.path} added`;
  if (c.kind === "removed") return `${c.path} removed`;
  return `${c.path} changed from ${showValue(c.before)} to ${showValue(c.after)}`;
}

export function showValue(v: unknown): string {
  if (Array.isArray(v)) return `[${v.join(", ")}]`;
  return typeof v === "string" || typeof v === "number" ? String(v) : JSON.stringify(v);
}

export function showWindow(w: NonNullable<TPipelineSpec["aggregate"]>["window"]): string {
  if (!w) return "no";
  return w.tumbling !== undefined ? `tumbling ${w.tumbling}` : `sliding ${w.sliding.size}/${w.sliding.slide}`;
}

export const show = (v: readonly string[] | undefined) => (v ? `[${v.join(", ")}]` : "no key");
