// Which dead letters a person means — by outcome, a reason group or text in the reason, partition, time
// range, text in the payload, or by id — as one parameterized SQL condition over `dead_letters d`,
// shared by browsing, discarding and replaying, so the page shows exactly the rows an action then takes.
//
// Text in the payload matches the decoded JSON case-insensitively, or the raw bytes exactly. Not
// `convert_from(raw, 'UTF8')`: dead letters are often not UTF-8 at all (that is why they are dead
// letters), and Postgres raises on the first invalid byte, which would fail the whole query.
import { z } from "zod";
import { expressionBuilder, sql, type Expression, type SqlBool, type TControlPlaneTables } from "@sluice/db";
import { DEAD_LETTER_OUTCOMES, REASON_CHARS, REASON_GROUPING } from "./summarize-dead-letters";
import { escapeLike } from "../sql/escape-like";

/** At most this many ids in one filter (a page selection; "all with this reason" uses the reason instead). */
export const MAX_FILTER_IDS = 10_000;

export const ZDeadLetterFilter = z.object({
  pipeline: z.string().min(1).max(200),
  outcome: z.enum(DEAD_LETTER_OUTCOMES).optional(),
  /** "All with this reason": a reason group as the summary shows it (the row's own values as <time>, <n>, …), or an exact reason. */
  reasonGroup: z.string().trim().min(1).max(2000).optional(),
  /** Part of the reason, case-insensitive. */
  reasonContains: z.string().trim().min(1).max(500).optional(),
  partition: z.number().int().min(0).optional(),
  /** When the dead letter was written (its batch's commit). */
  from: z.coerce.date().optional(),
  to: z.coerce.date().optional(),
  /** Part of the payload: the decoded JSON (case-insensitive) or the raw bytes (exactly). */
  text: z.string().trim().min(1).max(500).optional(),
  ids: z.array(z.coerce.number().int().min(1)).max(MAX_FILTER_IDS).optional(),
});
export type TDeadLetterFilter = z.output<typeof ZDeadLetterFilter>;

/** True when the filter narrows anything (acting on every row of a pipeline needs at least the outcome). */
export const narrowsSomething = (f: Omit<TDeadLetterFilter, "pipeline">) =>
  Boolean(
    f.outcome ||
    f.reasonGroup ||
    f.reasonContains ||
    f.partition !== undefined ||
    f.from ||
    f.to ||
    f.text ||
    f.ids?.length,
  );

/** The filter's condition on `dead_letters d` (the pipeline or version is the caller's condition). */
export function deadLetterCondition(f: Omit<TDeadLetterFilter, "pipeline">): Expression<SqlBool> {
  const eb = expressionBuilder<{ d: TControlPlaneTables["dead_letters"] }, "d">();
  const parts: Expression<SqlBool>[] = [];
  if (f.outcome) parts.push(eb("d.outcome", "=", f.outcome));
  if (f.reasonGroup) {
    const [a, b, c, d] = REASON_GROUPING;
    parts.push(
      eb.or([
        eb("d.reason", "=", f.reasonGroup),
        eb(
          sql<string>`left(regexp_replace(regexp_replace(regexp_replace(regexp_replace(${eb.ref("d.reason")},
      ${a.pattern}, ${a.replacement}, 'g'), ${b.pattern}, ${b.replacement}, 'g'), ${c.pattern}, ${c.replacement}, 'g'), ${d.pattern}, ${d.replacement}, 'g'), ${REASON_CHARS})`,
          "=",
          sql<string>`left(${f.reasonGroup}, ${REASON_CHARS})`,
        ),
      ]),
    );
  }
  if (f.reasonContains)
    parts.push(eb("d.reason", "ilike", sql<string>`'%' || ${escapeLike(f.reasonContains)} || '%'`));
  if (f.partition !== undefined) parts.push(eb("d.partition", "=", f.partition));
  if (f.from) parts.push(eb("d.created_at", ">=", f.from));
  if (f.to) parts.push(eb("d.created_at", "<=", f.to));
  if (f.text)
    parts.push(
      eb.or([
        eb.and([
          eb("d.payload", "is not", null),
          eb(
            sql<string>`${eb.ref("d.payload")}::text`,
            "ilike",
            sql<string>`'%' || ${escapeLike(f.text)} || '%'`,
          ),
        ]),
        eb(sql<number>`position(convert_to(${f.text}, 'UTF8') IN ${eb.ref("d.raw")})`, ">", 0),
      ]),
    );
  if (f.ids?.length)
    parts.push(
      eb(
        "d.id",
        "in",
        sql<bigint>`(SELECT jsonb_array_elements_text(${JSON.stringify(f.ids)}::jsonb)::bigint)`,
      ),
    );
  return parts.length ? eb.and(parts) : sql<SqlBool>`TRUE`;
}
