// Dead letters `d` with their pipeline version `v`, and what became of each so far: a discard (`r`), and
// its newest replay item (`i`) with that replay (`rq`) and the version it ran on (`iv`). Browsing shows
// it and replaying checks it, from the same joins, so the page and the action never disagree.
import { tables } from "@sluice/db";

/** `dead_letters d` joined to `pipeline_versions v`: filter it, then add the fate or count it. */
export const deadLettersWithVersion = () =>
  tables.selectFrom("dead_letters as d").innerJoin("pipeline_versions as v", "v.id", "d.pipeline_version_id");

/** Adds `r`, `i`, `rq` and `iv` (all nullable) to a dead-letter query. */
export function withFate(q: ReturnType<typeof deadLettersWithVersion>) {
  return q
    .leftJoin("dead_letter_resolutions as r", "r.dead_letter_id", "d.id")
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom("dead_letter_replay_items as x")
          .selectAll("x")
          .whereRef("x.dead_letter_id", "=", "d.id")
          .orderBy("x.id", "desc")
          .limit(1)
          .as("i"),
      (join) => join.onTrue(),
    )
    .leftJoin("dead_letter_replays as rq", "rq.id", "i.replay_id")
    .leftJoin("pipeline_versions as iv", "iv.id", "i.pipeline_version_id");
}
