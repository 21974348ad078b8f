// Can the next version continue a join's state — the dimension's versions (per key, by event time),
// its changelog offsets and watermark, and the rows waiting for it? Only if it would have read and kept
// them the same way: the same topic, key, event time and sequence, and rows matched on the same fields.
import type { Context } from "./state-checks";

export function checkJoin({ before, after, at, under, problem, note }: Context): void {
  const [was, now] = [before.join, after.join];
  if (!was && now) {
    const change = at("join")!;
    return note(
      "join",
      change,
      "rows read before this version were not enriched, and the dimension is read from its startingOffsets",
    );
  }
  if (was && !now)
    return note("join", at("join")!, "the dimension's versions and the rows waiting for it are dropped");
  if (!was || !now) return;
  const topic = at("join.dimension.kafka.topic");
  if (topic)
    return problem("join", topic, `the join's offsets are positions in ${was.dimension.kafka.topic}`);
  const key = at("join.dimension.key");
  if (key) problem("join", key, `the dimension's versions are stored per [${was.dimension.key.join(", ")}]`);
  const time = at("join.dimension.eventTime.column");
  if (time)
    problem(
      "join",
      time,
      `each stored version is valid from its ${was.dimension.eventTime.column}, and the dimension's watermark is a time of it`,
    );
  const sequence = under("join.dimension.sequenceBy")[0];
  if (sequence) problem("join", sequence, "the stored versions were ordered by the old sequence");
  for (const field of [
    ...now.dimension.key,
    now.dimension.eventTime.column,
    ...(now.dimension.sequenceBy ? [now.dimension.sequenceBy] : []),
  ]) {
    const type = at(`join.dimension.contract.fields.${field}.type`);
    if (type) problem("join", type, "the stored versions hold the old type's values");
  }
  const on = under("join.on")[0];
  if (on) problem("join", on, "the rows waiting for the dimension are keyed by the old join fields");
  const source = at("eventTime.column");
  if (source?.kind === "changed")
    problem("join", source, "the rows waiting for the dimension wait by the old event time");
  for (const added of under("join.dimension.contract.fields").filter((c) => c.kind === "added"))
    note("join", added, "versions stored before this version do not have it: rows joined with them get null");
}
