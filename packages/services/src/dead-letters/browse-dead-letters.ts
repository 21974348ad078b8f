// Browsing a pipeline's dead letters (every version's: after a schema change the rows the old contract
// quarantined belong to the old version) with the filters the actions use (dead-letter-filter.ts), newest
// first, a page at a time by id (keyset: the next page starts below the last id, so a page never shifts
// while the engine keeps writing). And one dead letter inspected: its raw bytes as the engine kept them
// (hex and as text) beside the decoded payload, and what became of it (discarded, or replayed: into
// which batch of which version, by whom, with what outcome there).
import { z } from "zod";
import { firstRowOf, rowsOf, sql, tables, type PrismaClient } from "@sluice/db";
import { deadLetterCondition, ZDeadLetterFilter } from "./dead-letter-filter";
import { deadLettersWithVersion, withFate } from "./dead-letter-fate";
import { toRowView, type TDeadLetterOutcome, type TDeadLetterRowView } from "./summarize-dead-letters";

export const ZBrowseDeadLettersInput = ZDeadLetterFilter.extend({
  /** The next page: rows with an id below this one. */
  before: z.coerce.number().int().min(1).optional(),
  limit: z.number().int().min(1).max(200).default(50),
});
export type TBrowseDeadLettersInput = z.input<typeof ZBrowseDeadLettersInput>;

/** Counting stops here: an exact count over millions of rows is not worth a slow page. */
export const BROWSE_COUNT_LIMIT = 10_000;
const PREVIEW_CHARS = 160;

export interface TDeadLetterResolutionView {
  action: string;
  actor: string;
  reason: string;
  at: Date;
}

export interface TDeadLetterReplayView {
  replayId: number;
  status: "pending" | "applied";
  by: string;
  /** When it was asked for (pending) or applied. */
  at: Date;
  batchId: number | null;
  /** The version it was replayed into. */
  version: number | null;
  /** The row's outcome in the replay batch (sink, duplicate, quarantined, late, refused, …). */
  outcome: string | null;
  detail: string | null;
}

export interface TBrowsedDeadLetter extends TDeadLetterRowView {
  version: number;
  /** Bytes kept (at most 64 KiB; `truncated` when the record was larger). */
  bytes: number;
  truncated: boolean;
  /** The payload's first characters (decoded JSON, or the raw bytes as text). */
  preview: string;
  resolution: TDeadLetterResolutionView | null;
  /** Its newest replay: pending, or applied into a batch with the row's outcome there. */
  replay: TDeadLetterReplayView | null;
}

export interface TDeadLetterPage {
  pipeline: string;
  rows: TBrowsedDeadLetter[];
  /** Rows matching the filter, counted up to BROWSE_COUNT_LIMIT (`countCapped` when there are more). */
  matching: number;
  countCapped: boolean;
  /** The id to pass as `before` for the next page; null on the last page. */
  nextBefore: number | null;
}

/** null when there is no pipeline of that name. */
export async function browseDeadLetters(
  db: PrismaClient,
  input: TBrowseDeadLettersInput,
): Promise<TDeadLetterPage | null> {
  const { before, limit, pipeline, ...filter } = ZBrowseDeadLettersInput.parse(input);
  const found = await db.pipeline.findUnique({ where: { name: pipeline }, select: { id: true, name: true } });
  if (!found) return null;
  const where = deadLetterCondition(filter);
  const matchingRows = deadLettersWithVersion().where("v.pipeline_id", "=", found.id).where(where);
  const [rows, counted] = await Promise.all([
    rowsOf(
      db,
      withFate(matchingRows)
        .select((eb) => [
          "d.id",
          "v.version",
          "d.batch_id",
          "d.outcome",
          eb.fn<string>("left", ["d.reason", eb.lit(500)]).as("reason"),
          "d.partition",
          "d.offset",
          eb.fn<string | null>("left", ["d.key", eb.lit(200)]).as("key"),
          "d.ingest_time",
          "d.created_at",
          eb.fn<number>("octet_length", ["d.raw"]).as("bytes"),
          "d.truncated",
          sql<Uint8Array>`substring(${eb.ref("d.raw")} FROM 1 FOR ${PREVIEW_CHARS * 4})`.as("head"),
          sql<string | null>`left(${eb.ref("d.payload")}::text, ${PREVIEW_CHARS})`.as("payload_head"),
          "r.action as r_action",
          "r.actor as r_actor",
          "r.reason as r_reason",
          "r.created_at as r_at",
          "i.replay_id",
          "i.status as replay_status",
          "rq.actor as replay_by",
          eb.fn.coalesce("i.applied_at", "i.created_at").as("replay_at"),
          "i.batch_id as replay_batch",
          "iv.version as replay_version",
          "i.outcome as replay_outcome",
          eb.fn<string | null>("left", ["i.detail", eb.lit(500)]).as("replay_detail"),
        ])
        .$if(before !== undefined, (q) => q.where("d.id", "<", BigInt(before!)))
        .orderBy("d.id", "desc")
        .limit(limit + 1),
    ),
    firstRowOf(
      db,
      tables
        .selectFrom(
          matchingRows
            .select(sql`1`.as("one"))
            .limit(BROWSE_COUNT_LIMIT + 1)
            .as("m"),
        )
        .select(sql<number>`count(*)::int`.as("n")),
    ),
  ]);
  const page = rows.slice(0, limit);
  const matching = counted?.n ?? 0;
  return {
    pipeline: found.name,
    rows: page.map((r) => ({
      ...toRowView(r),
      version: r.version,
      bytes: r.bytes,
      truncated: r.truncated,
      preview: (r.payload_head ?? Buffer.from(r.head).toString("utf8")).slice(0, PREVIEW_CHARS),
      resolution: r.r_action
        ? { action: r.r_action, actor: r.r_actor ?? "", reason: r.r_reason ?? "", at: r.r_at! }
        : null,
      replay:
        r.replay_id === null
          ? null
          : {
              replayId: Number(r.replay_id),
              status: r.replay_status === "applied" ? "applied" : "pending",
              by: r.replay_by ?? "",
              at: r.replay_at!,
              batchId: r.replay_batch === null ? null : Number(r.replay_batch),
              version: r.replay_version,
              outcome: r.replay_outcome,
              detail: r.replay_detail,
            },
    })),
    matching: Math.min(matching, BROWSE_COUNT_LIMIT),
    countCapped: matching > BROWSE_COUNT_LIMIT,
    nextBefore: rows.length > limit ? Number(page[page.length - 1]!.id) : null,
  };
}

export const ZInspectDeadLetterInput = z.object({
  pipeline: z.string().min(1).max(200),
  id: z.coerce.number().int().min(1),
});

export interface TInspectedDeadLetter extends Omit<TBrowsedDeadLetter, "preview" | "replay"> {
  topic: string;
  /** The kept bytes as hex, 16 bytes per line with their offset: what was on the wire. */
  hex: string[];
  /** The kept bytes read as UTF-8 (invalid sequences shown as U+FFFD) — and whether they were valid. */
  text: string;
  validUtf8: boolean;
  /** The payload as the engine decoded it (JSON), when it could; null for rows that were not JSON. */
  payload: unknown;
}

/** null when the pipeline or the dead letter (of that pipeline) does not exist. */
export async function inspectDeadLetter(
  db: PrismaClient,
  input: z.input<typeof ZInspectDeadLetterInput>,
): Promise<TInspectedDeadLetter | null> {
  const { pipeline, id } = ZInspectDeadLetterInput.parse(input);
  const d = await firstRowOf(
    db,
    tables
      .selectFrom("dead_letters as d")
      .innerJoin("pipeline_versions as v", "v.id", "d.pipeline_version_id")
      .innerJoin("pipelines as p", "p.id", "v.pipeline_id")
      .select([
        "d.id",
        "v.version",
        "d.batch_id",
        "d.outcome",
        "d.reason",
        "d.topic",
        "d.partition",
        "d.offset",
        "d.key",
        "d.raw",
        "d.truncated",
        "d.payload",
        "d.ingest_time",
        "d.created_at",
      ])
      .where("d.id", "=", BigInt(id))
      .where("p.name", "=", pipeline),
  );
  if (!d) return null;
  const resolution = await db.deadLetterResolution.findUnique({ where: { deadLetterId: d.id } });
  const raw = Buffer.from(d.raw);
  return {
    id: Number(d.id),
    version: d.version,
    batchId: Number(d.batch_id),
    outcome: d.outcome as TDeadLetterOutcome,
    reason: d.reason,
    topic: d.topic,
    partition: d.partition,
    offset: Number(d.offset),
    key: d.key,
    ingestTime: d.ingest_time,
    createdAt: d.created_at,
    bytes: raw.length,
    truncated: d.truncated,
    hex: hexLines(raw),
    text: raw.toString("utf8"),
    validUtf8: isUtf8(raw),
    payload: d.payload ?? null,
    resolution: resolution
      ? {
          action: resolution.action,
          actor: resolution.actor,
          reason: resolution.reason,
          at: resolution.createdAt,
        }
      : null,
  };
}

/** "00000010  7b 22 61 …  {"a…": offset, 16 bytes in hex, the printable ASCII beside them. */
export function hexLines(bytes: Uint8Array): string[] {
  const lines: string[] = [];
  for (let at = 0; at < bytes.length; at += 16) {
    const chunk = bytes.subarray(at, at + 16);
    const hex = Array.from(chunk, (b) => b.toString(16).padStart(2, "0")).join(" ");
    const ascii = Array.from(chunk, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${at.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${ascii}`);
  }
  return lines;
}

function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}
