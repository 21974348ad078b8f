// Browsing a pipeline's dead letters (every version's: after a schema change the rows the old contract
// quarantined belong to the old version) with the filters the actions use (dead-letter-filter.ts), newest
// first, a page at a time by id (keyset: the next page starts below the last id, so a page never shifts
// while the engine keeps writing). And one dead letter inspected: its raw bytes as the engine kept them
// (hex and as text) beside the decoded payload, and what became of it (discarded, or replayed: into
// which batch of which version, by whom, with what outcome there).
import { z } from "zod";
import type { PrismaClient } from "@sluice/db";
import { deadLetterCondition, ZDeadLetterFilter } from "./dead-letter-filter";
import {
  toRowView,
  type TDeadLetterOutcome,
  type TDeadLetterRowView,
  type TDeadLetterSqlRow,
} from "./summarize-dead-letters";

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

type TRow = TDeadLetterSqlRow & {
  version: number;
  bytes: number;
  truncated: boolean;
  head: Uint8Array;
  payload_head: string | null;
  r_action: string | null;
  r_actor: string | null;
  r_reason: string | null;
  r_at: Date | null;
  replay_id: bigint | null;
  replay_status: string | null;
  replay_by: string | null;
  replay_at: Date | null;
  replay_batch: bigint | null;
  replay_version: number | null;
  replay_outcome: string | null;
  replay_detail: string | null;
};

/** null when there is no pipeline of that name. */
export async function browseDeadLetters(
  db: PrismaClient,
  input: TBrowseDeadLettersInput,
): Promise<TDeadLetterPage | null> {
  const { before, limit, pipeline, ...filter } = ZBrowseDeadLettersInput.parse(input);
  const found = await db.pipeline.findUnique({ where: { name: pipeline }, select: { id: true, name: true } });
  if (!found) return null;
  const where = deadLetterCondition(filter);
  const [rows, counted] = await Promise.all([
    db.$queryRaw<TRow[]>`
      SELECT d.id, v.version, d.batch_id, d.outcome, left(d.reason, 500) AS reason, d.partition, d."offset", left(d.key, 200) AS key, d.ingest_time, d.created_at,
             octet_length(d.raw) AS bytes, d.truncated, substring(d.raw FROM 1 FOR ${PREVIEW_CHARS * 4}) AS head, left(d.payload::text, ${PREVIEW_CHARS}) AS payload_head,
             r.action AS r_action, r.actor AS r_actor, r.reason AS r_reason, r.created_at AS r_at,
             i.replay_id, i.status AS replay_status, rq.actor AS replay_by, coalesce(i.applied_at, i.created_at) AS replay_at, i.batch_id AS replay_batch,
             iv.version AS replay_version, i.outcome AS replay_outcome, left(i.detail, 500) AS replay_detail
        FROM dead_letters d JOIN pipeline_versions v ON v.id = d.pipeline_version_id
        LEFT JOIN dead_letter_resolutions r ON r.dead_letter_id = d.id
        LEFT JOIN LATERAL (SELECT * FROM dead_letter_replay_items x WHERE x.dead_letter_id = d.id ORDER BY x.id DESC LIMIT 1) i ON true
        LEFT JOIN dead_letter_replays rq ON rq.id = i.replay_id
        LEFT JOIN pipeline_versions iv ON iv.id = i.pipeline_version_id
       WHERE v.pipeline_id = ${found.id} AND ${where} AND (${before ?? null}::bigint IS NULL OR d.id < ${before ?? null})
       ORDER BY d.id DESC LIMIT ${limit + 1}`,
    db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM (SELECT 1 FROM dead_letters d JOIN pipeline_versions v ON v.id = d.pipeline_version_id
       WHERE v.pipeline_id = ${found.id} AND ${where} LIMIT ${BROWSE_COUNT_LIMIT + 1}) m`,
  ]);
  const page = rows.slice(0, limit);
  const matching = counted[0]?.n ?? 0;
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
  const [d] = await db.$queryRaw<
    {
      id: bigint;
      version: number;
      batch_id: bigint;
      outcome: string;
      reason: string;
      topic: string;
      partition: number;
      offset: bigint;
      key: string | null;
      raw: Uint8Array;
      truncated: boolean;
      payload: unknown;
      ingest_time: Date | null;
      created_at: Date;
    }[]
  >`SELECT d.id, v.version, d.batch_id, d.outcome, d.reason, d.topic, d.partition, d."offset", d.key, d.raw, d.truncated, d.payload, d.ingest_time, d.created_at
      FROM dead_letters d JOIN pipeline_versions v ON v.id = d.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id
     WHERE d.id = ${id} AND p.name = ${pipeline}`;
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
