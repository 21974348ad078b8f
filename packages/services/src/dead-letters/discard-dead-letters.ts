// Discarding dead letters a person has looked at and decided will never be replayed — selected by
// filters (outcome, text in the reason, partition, time range, text in the payload) or by id — with a
// reason. Idempotent: a dead letter is resolved at most once (dead_letter_resolutions is unique per
// row), so discarding again, or two people at once, resolves nothing twice. The dead letters themselves
// stay (raw bytes and all) for the record; the resolution says who decided, when and why.
import { z } from "zod";
import type { PrismaClient } from "@sluice/db";
import { recordAuditEvent, type TAuditWho } from "../audit/record-audit-event";
import { findPipelineVersion } from "../pipelines/find-pipeline-version";
import { DEAD_LETTER_OUTCOMES } from "./summarize-dead-letters";

/** At most this many rows per discard (the filter narrows it further; a second call takes the rest). */
export const MAX_DISCARD = 10_000;

export const ZDeadLetterFilter = z.object({
  pipeline: z.string().min(1).max(200),
  outcome: z.enum(DEAD_LETTER_OUTCOMES).optional(),
  /** Part of the reason, case-insensitive. */
  reasonContains: z.string().trim().min(1).max(500).optional(),
  partition: z.number().int().min(0).optional(),
  from: z.coerce.date().optional(),
  to: z.coerce.date().optional(),
  /** Part of the raw payload, case-insensitive. */
  text: z.string().trim().min(1).max(500).optional(),
  ids: z.array(z.coerce.number().int().min(1)).max(MAX_DISCARD).optional(),
});

export const ZDiscardDeadLettersInput = ZDeadLetterFilter.extend({
  reason: z.string().trim().min(1, "Give a reason: why these rows will never be replayed").max(2000),
}).refine((f) => f.outcome || f.reasonContains || f.partition !== undefined || f.from || f.to || f.text || f.ids?.length, {
  message: "choose which rows: an outcome, a reason, a partition, a time range, text in the payload, or rows by id (discarding everything needs at least the outcome)",
  path: ["outcome"],
});
export type TDiscardDeadLettersInput = z.input<typeof ZDiscardDeadLettersInput>;

export interface TDiscardDeadLettersResult {
  /** Rows newly discarded. */
  discarded: number;
  /** Rows the filter matched that were already resolved (or are waiting to be replayed: a replay decision stands until applied). */
  alreadyResolved: number;
  /** True when more rows match than one call discards. */
  more: boolean;
}

export async function discardDeadLetters(db: PrismaClient, who: TAuditWho, input: TDiscardDeadLettersInput): Promise<TDiscardDeadLettersResult | null> {
  const f = ZDiscardDeadLettersInput.parse(input);
  const found = await findPipelineVersion(db, f.pipeline);
  if (!found?.version) return null;
  const v = found.version.id;
  return db.$transaction(async (tx) => {
    const matched = await tx.$queryRaw<{ id: bigint; resolved: boolean }[]>`
      SELECT d.id, (r.id IS NOT NULL OR EXISTS (SELECT 1 FROM dead_letter_replay_items i WHERE i.dead_letter_id = d.id AND i.status = 'pending')) AS resolved
        FROM dead_letters d LEFT JOIN dead_letter_resolutions r ON r.dead_letter_id = d.id
       WHERE d.pipeline_version_id = ${v}
         AND (${f.outcome ?? null}::text IS NULL OR d.outcome = ${f.outcome ?? null})
         AND (${f.reasonContains ?? null}::text IS NULL OR d.reason ILIKE '%' || ${escapeLike(f.reasonContains)} || '%')
         AND (${f.partition ?? null}::int IS NULL OR d.partition = ${f.partition ?? null})
         AND (${f.from ?? null}::timestamptz IS NULL OR d.created_at >= ${f.from ?? null})
         AND (${f.to ?? null}::timestamptz IS NULL OR d.created_at <= ${f.to ?? null})
         AND (${f.text ?? null}::text IS NULL OR convert_from(d.raw, 'UTF8') ILIKE '%' || ${escapeLike(f.text)} || '%')
         AND (${f.ids ? JSON.stringify(f.ids) : null}::jsonb IS NULL OR d.id IN (SELECT jsonb_array_elements_text(${f.ids ? JSON.stringify(f.ids) : null}::jsonb)::bigint))
       ORDER BY d.id LIMIT ${MAX_DISCARD + 1}`;
    const open = matched.slice(0, MAX_DISCARD).filter((m) => !m.resolved).map((m) => m.id);
    const discarded = open.length
      ? await tx.$executeRaw`
          INSERT INTO dead_letter_resolutions (dead_letter_id, pipeline_version_id, action, actor_user_id, actor, reason)
          SELECT x::bigint, ${v}, 'discarded', ${who.actorUserId}, ${who.actor}, ${f.reason} FROM jsonb_array_elements_text(${JSON.stringify(open.map(String))}::jsonb) x
          ON CONFLICT (dead_letter_id) DO NOTHING`
      : 0;
    const result = { discarded, alreadyResolved: matched.slice(0, MAX_DISCARD).length - open.length + (open.length - discarded), more: matched.length > MAX_DISCARD };
    if (discarded > 0) {
      const { pipeline: _p, reason: _r, ...filter } = f;
      await recordAuditEvent(tx, { ...who, action: "deadletter.discard", target: { type: "pipeline", id: found.pipelineId, label: found.pipeline }, reason: f.reason, after: { ...result, filter, version: found.version!.version } });
    }
    return result;
  });
}

/** A LIKE pattern that matches the text literally (% and _ typed by a person are not wildcards). */
const escapeLike = (s: string | undefined) => (s === undefined ? null : s.replace(/[\\%_]/g, (c) => `\\${c}`));
