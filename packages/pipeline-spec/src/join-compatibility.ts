// Can the next version continue a join's state — the dimension's versions (per key, by event time),
// its changelog offsets and watermark, and the rows waiting for it? Only if it would have read and kept
// them the same way: the same topic, key, event time and sequence, and rows matched on the same fields.
import { dimensionName, isPipelineDimension } from "./join-schema";
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
  const [wasDim, nowDim] = [was.dimension, now.dimension];
  // A pipeline dimension keeps no versions here (they stay in its table): only the waiting rows, keyed
  // by its key and the `on` fields, and the watermark it had reached — both its pipeline's.
  if (
    isPipelineDimension(wasDim) !== isPipelineDimension(nowDim) ||
    dimensionName(wasDim) !== dimensionName(nowDim)
  )
    return problem(
      "join",
      at("join.dimension.pipeline") ?? at("join.dimension.kafka.topic") ?? under("join.dimension")[0]!,
      `the join's state was read from ${dimensionName(wasDim)}`,
    );
  const key = at("join.dimension.key");
  if (key) problem("join", key, `the dimension's versions are stored per [${was.dimension.key.join(", ")}]`);
  const time = at("join.dimension.eventTime.column");
  if (time && !isPipelineDimension(wasDim))
    problem(
      "join",
      time,
      `each stored version is valid from its ${wasDim.eventTime.column}, and the dimension's watermark is a time of it`,
    );
  const sequence = under("join.dimension.sequenceBy")[0];
  if (sequence) problem("join", sequence, "the stored versions were ordered by the old sequence");
  for (const field of [
    ...nowDim.key,
    ...(isPipelineDimension(nowDim)
      ? []
      : [nowDim.eventTime.column, ...(nowDim.sequenceBy ? [nowDim.sequenceBy] : [])]),
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
