// What did not reach a pipeline's sink, and why (dead_letters of its latest version): counts by
// outcome, the most frequent reasons, and the newest rows. Reasons are what a person acts on, so they
// are grouped by what they say rather than by their exact text: the engine's reasons carry the row's
// own values (a late row's event time and the watermark, the JSON parser's position or snippet, a
// contract violation's value), which would make every row its own group. Each group keeps one example.
// Bounded work for a page that refreshes: counts by outcome are exact (an index count), reasons are
// grouped over the newest `sample` rows of each outcome, and rows are read newest first per outcome
// along the (version, outcome, created_at) index, never by sorting every row of the version.
import { rowsOf, sql, tables, type PrismaClient, type TControlPlaneTables, type TRowOf } from "@sluice/db";
import { z } from "zod";
import { findPipelineVersion } from "../pipelines/find-pipeline-version";

export const DEAD_LETTER_OUTCOMES = ["dead_letter", "quarantined", "late"] as const;
export type TDeadLetterOutcome = (typeof DEAD_LETTER_OUTCOMES)[number];

export const ZSummarizeDeadLettersInput = z.object({
  pipeline: z.string().min(1).max(200),
  reasons: z.number().int().min(1).max(100).default(10),
  rows: z.number().int().min(1).max(200).default(20),
  /** Reasons are grouped over at most this many of the newest rows of each outcome. */
  sample: z.number().int().min(1).max(10_000).default(5_000),
});
export type TSummarizeDeadLettersInput = z.input<typeof ZSummarizeDeadLettersInput>;

// How a reason becomes its group: each pattern (a Postgres regular expression) is replaced, in this
// order, everywhere in the reason. Fixed strings of this module, passed as parameters; never user input.
/** ISO instants as the engine writes them (a late row's event time, the watermark, the late horizon). */
const INSTANT = { pattern: String.raw`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z`, replacement: "<time>" };
/** JSON.parse: "… in JSON at position 42". */
const JSON_POSITION = { pattern: String.raw`at position \d+`, replacement: "at position <n>" };
/** JSON.parse: `Unexpected token 'c', "card_payme"... is not valid JSON` (the row's first characters). */
const JSON_TOKEN = {
  pattern: String.raw`Unexpected token .* is not valid JSON`,
  replacement: "Unexpected token … is not valid JSON",
};
/** The contract: `field "amount" should be decimal, got "12,50"` (the row's value). */
const CONTRACT_VALUE = { pattern: String.raw`, got .*$`, replacement: ", got …" };
export const REASON_GROUPING = [INSTANT, JSON_POSITION, JSON_TOKEN, CONTRACT_VALUE] as const;

/** Longest reason text returned (the engine's are far shorter; this only bounds the payload). */
export const REASON_CHARS = 500;

export interface TDeadLetterReasonGroup {
  outcome: TDeadLetterOutcome;
  /** The reason with the row's own values replaced (`<time>`, `<n>`, `…`). */
  reason: string;
  /** One reason of the group as the engine wrote it. */
  example: string;
  count: number;
  lastAt: Date;
}

export interface TDeadLetterRowView {
  id: number;
  batchId: number;
  outcome: TDeadLetterOutcome;
  reason: string;
  partition: number;
  offset: number;
  key: string | null;
  /** The Kafka record's timestamp. */
  ingestTime: Date | null;
  createdAt: Date;
}

export interface TDeadLetterSummary {
  pipeline: string;
  /** The latest version's number; null when the pipeline has no version yet. */
  version: number | null;
  counts: Record<TDeadLetterOutcome, number> & { total: number };
  /** The most frequent reason groups, at most `reasons`, most frequent first. */
  reasons: TDeadLetterReasonGroup[];
  /** How many reason groups there are in all (more than `reasons.length` when some were left off). */
  reasonGroups: number;
  /** Reasons were grouped over the newest this many rows of each outcome (exact when no count exceeds it). */
  reasonSample: number;
  /** The newest rows, at most `rows`. */
  rows: TDeadLetterRowView[];
}

/** null when there is no pipeline of that name. */
export async function summarizeDeadLetters(
  db: PrismaClient,
  input: TSummarizeDeadLettersInput,
): Promise<TDeadLetterSummary | null> {
  const {
    pipeline: name,
    reasons: reasonLimit,
    rows: rowLimit,
    sample,
  } = ZSummarizeDeadLettersInput.parse(input);
  const ref = await findPipelineVersion(db, name);
  if (!ref) return null;
  const counts: TDeadLetterSummary["counts"] = { dead_letter: 0, quarantined: 0, late: 0, total: 0 };
  if (!ref.version)
    return {
      pipeline: ref.pipeline,
      version: null,
      counts,
      reasons: [],
      reasonGroups: 0,
      reasonSample: sample,
      rows: [],
    };
  const pipelineVersionId = ref.version.id;
  const [byOutcome, groups, rows] = await Promise.all([
    db.deadLetter.groupBy({ by: ["outcome"], where: { pipelineVersionId }, _count: { _all: true } }),
    reasonGroups(db, pipelineVersionId, sample, reasonLimit),
    newestRows(db, pipelineVersionId, rowLimit),
  ]);
  for (const g of byOutcome) {
    if (isOutcome(g.outcome)) counts[g.outcome] += g._count._all;
    counts.total += g._count._all;
  }
  return {
    pipeline: ref.pipeline,
    version: ref.version.version,
    counts,
    reasons: groups.map((g) => ({
      outcome: g.outcome as TDeadLetterOutcome,
      reason: g.reason,
      example: g.example,
      count: g.n,
      lastAt: g.last_at,
    })),
    reasonGroups: groups[0]?.groups ?? 0,
    reasonSample: sample,
    rows: rows.map(toRowView),
  };
}

/** A dead_letters row as SQL returns it (snake_case, bigints) → the view the console shows. */
export type TDeadLetterSqlRow = {
  id: bigint;
  batch_id: bigint;
  outcome: string;
  reason: string;
  partition: number;
  offset: bigint;
  key: string | null;
  ingest_time: Date | null;
  created_at: Date;
};
export const toRowView = (r: TDeadLetterSqlRow): TDeadLetterRowView => ({
  id: Number(r.id),
  batchId: Number(r.batch_id),
  outcome: r.outcome as TDeadLetterOutcome,
  reason: r.reason,
  partition: r.partition,
  offset: Number(r.offset),
  key: r.key,
  ingestTime: r.ingest_time,
  createdAt: r.created_at,
});

// The engine writes only DEAD_LETTER_OUTCOMES. Each is read along the (version, outcome, created_at)
// index, newest first, and the three are merged (spelled out: the SQL stays one static text).
function newestOfEachOutcome<C extends keyof TControlPlaneTables["dead_letters"] & string>(
  v: string,
  limit: number,
  columns: readonly C[],
) {
  const newest = (outcome: TDeadLetterOutcome) =>
    tables
      .selectFrom("dead_letters")
      .select(columns)
      .where("pipeline_version_id", "=", v)
      .where("outcome", "=", sql.lit(outcome))
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(limit);
  // Parenthesized members: each keeps its own ORDER BY and LIMIT (Kysely's unionAll would not).
  return sql<TRowOf<ReturnType<typeof newest>>>`(${newest("dead_letter")}
    UNION ALL ${newest("quarantined")}
    UNION ALL ${newest("late")})`;
}

function reasonGroups(db: PrismaClient, v: string, sample: number, limit: number) {
  const [a, b, c, d] = REASON_GROUPING;
  const recent = newestOfEachOutcome(v, sample, ["outcome", "reason", "created_at"]).as("recent");
  // Grouped in a subquery: the parameters of the expression would not match a GROUP BY that repeats it.
  const patterned = tables
    .selectFrom(recent)
    .select((eb) => [
      "recent.outcome",
      "recent.reason",
      "recent.created_at",
      sql<string>`regexp_replace(regexp_replace(regexp_replace(regexp_replace(${eb.ref("recent.reason")},
                     ${a.pattern}, ${a.replacement}, 'g'), ${b.pattern}, ${b.replacement}, 'g'),
                     ${c.pattern}, ${c.replacement}, 'g'), ${d.pattern}, ${d.replacement}, 'g')`.as(
        "pattern",
      ),
    ])
    .as("d");
  return rowsOf(
    db,
    tables
      .selectFrom(patterned)
      .select((eb) => [
        "d.outcome",
        eb.fn<string>("left", ["d.pattern", eb.val(REASON_CHARS)]).as("reason"),
        eb.fn<string>("left", [eb.fn.min("d.reason"), eb.val(REASON_CHARS)]).as("example"),
        sql<number>`count(*)::int`.as("n"),
        eb.fn.max("d.created_at").as("last_at"),
        sql<number>`(count(*) OVER ())::int`.as("groups"),
      ])
      .groupBy(["d.outcome", "d.pattern"])
      .orderBy("n", "desc")
      .orderBy("d.outcome")
      .orderBy("d.pattern")
      .limit(limit),
  );
}

function newestRows(db: PrismaClient, v: string, limit: number): Promise<TDeadLetterSqlRow[]> {
  const r = newestOfEachOutcome(v, limit, [
    "id",
    "batch_id",
    "outcome",
    "reason",
    "partition",
    "offset",
    "key",
    "ingest_time",
    "created_at",
  ]).as("r");
  return rowsOf(
    db,
    tables
      .selectFrom(r)
      .select((eb) => [
        "r.id",
        "r.batch_id",
        "r.outcome",
        eb.fn<string>("left", ["r.reason", eb.val(REASON_CHARS)]).as("reason"),
        "r.partition",
        "r.offset",
        eb.fn<string | null>("left", ["r.key", eb.val(REASON_CHARS)]).as("key"),
        "r.ingest_time",
        "r.created_at",
      ])
      .orderBy("r.created_at", "desc")
      .orderBy("r.id", "desc")
      .limit(limit),
  );
}

function isOutcome(s: string): s is TDeadLetterOutcome {
  return (DEAD_LETTER_OUTCOMES as readonly string[]).includes(s);
}
