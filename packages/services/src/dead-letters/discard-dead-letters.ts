// Discarding dead letters a person has looked at and decided will never be replayed — selected by
// filters (outcome, text in the reason, partition, time range, text in the payload) or by id — with a
// reason. Idempotent: a dead letter is resolved at most once (dead_letter_resolutions is unique per
// row), so discarding again, or two people at once, resolves nothing twice. The dead letters themselves
// stay (raw bytes and all) for the record; the resolution says who decided, when and why. Every version's
// dead letters: after a schema change, the rows the old contract quarantined belong to the old version.
import { z } from "zod";
import { countOf, rowsOf, sql, tables, type PrismaClient } from "@sluice/db";
import { recordAuditEvent, type TAuditWho } from "../audit/record-audit-event";
import { findPipelineVersion } from "../pipelines/find-pipeline-version";
import { deadLetterCondition, narrowsSomething, ZDeadLetterFilter } from "./dead-letter-filter";

/** At most this many rows per discard (the filter narrows it further; a second call takes the rest). */
export const MAX_DISCARD = 10_000;

export const ZDiscardDeadLettersInput = ZDeadLetterFilter.extend({
  reason: z.string().trim().min(1, "Give a reason: why these rows will never be replayed").max(2000),
}).refine(narrowsSomething, {
  message:
    "choose which rows: an outcome, a reason, a partition, a time range, text in the payload, or rows by id (discarding everything needs at least the outcome)",
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

export async function discardDeadLetters(
  db: PrismaClient,
  who: TAuditWho,
  input: TDiscardDeadLettersInput,
): Promise<TDiscardDeadLettersResult | null> {
  const f = ZDiscardDeadLettersInput.parse(input);
  const found = await findPipelineVersion(db, f.pipeline);
  if (!found?.version) return null;
  return db.$transaction(async (tx) => {
    const matched = await rowsOf(
      tx,
      tables
        .selectFrom("dead_letters as d")
        .leftJoin("dead_letter_resolutions as r", "r.dead_letter_id", "d.id")
        .select((eb) => [
          "d.id",
          eb
            .or([
              eb("r.id", "is not", null),
              eb.exists(
                eb
                  .selectFrom("dead_letter_replay_items as i")
                  .select(sql`1`.as("one"))
                  .whereRef("i.dead_letter_id", "=", "d.id")
                  .where("i.status", "=", "pending"),
              ),
            ])
            .$castTo<boolean>()
            .as("resolved"),
        ])
        .where("d.pipeline_version_id", "in", (eb) =>
          eb
            .selectFrom("pipeline_versions as v")
            .select("v.id")
            .where("v.pipeline_id", "=", found.pipelineId),
        )
        .where(deadLetterCondition(f))
        .orderBy("d.id")
        .limit(MAX_DISCARD + 1),
    );
    const open = matched
      .slice(0, MAX_DISCARD)
      .filter((m) => !m.resolved)
      .map((m) => m.id);
    const discarded = open.length
      ? await countOf(
          tx,
          tables
            .insertInto("dead_letter_resolutions")
            .columns(["dead_letter_id", "pipeline_version_id", "action", "actor_user_id", "actor", "reason"])
            .expression(
              tables
                .selectFrom("dead_letters as d")
                .select((eb) => [
                  "d.id",
                  "d.pipeline_version_id",
                  sql<string>`'discarded'`.as("action"),
                  eb.val(who.actorUserId).as("actor_user_id"),
                  eb.val(who.actor).as("actor"),
                  eb.val(f.reason).as("reason"),
                ])
                .where(
                  "d.id",
                  "in",
                  sql<bigint>`(SELECT x::bigint FROM jsonb_array_elements_text(${JSON.stringify(open.map(String))}::jsonb) x)`,
                ),
            )
            .onConflict((oc) => oc.column("dead_letter_id").doNothing()),
        )
      : 0;
    const result = {
      discarded,
      alreadyResolved: matched.slice(0, MAX_DISCARD).length - open.length + (open.length - discarded),
      more: matched.length > MAX_DISCARD,
    };
    if (discarded > 0) {
      const { pipeline: _p, reason: _r, ...filter } = f;
      await recordAuditEvent(tx, {
        ...who,
        action: "deadletter.discard",
        target: { type: "pipeline", id: found.pipelineId, label: found.pipeline },
        reason: f.reason,
        after: { ...result, filter, version: found.version!.version },
      });
    }
    return result;
  });
}
