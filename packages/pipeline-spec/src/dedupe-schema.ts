// The dedupe section: which columns make an event's identity and how long identities are kept. Its own
// file because the spec's schema and sink resolution (resolve-sink.ts) both need its type.
import { z } from "zod";
import { canonicalDuration, durationProblem, parseDuration } from "./duration";
import { ZColumnList } from "./spec-primitives";

export const ZDedupe = z.strictObject({
  key: ZColumnList,
  /** "watermark": keys are kept until the watermark passes their event time; a duration: kept that long. */
  within: z
    .union([z.string(), z.number()], { error: "within must be watermark or a duration such as 24h" })
    .transform((value, ctx) => {
      if (value === "watermark") return value;
      const problem = durationProblem(value) ?? (parseDuration(value) === 0 ? "0 keeps nothing" : undefined);
      if (problem) {
        ctx.issues.push({
          code: "custom",
          input: value,
          message: `within must be watermark or a duration such as 24h: ${problem}`,
        });
        return z.NEVER;
      }
      return canonicalDuration(value);
    }),
});

export type TDedupe = z.output<typeof ZDedupe>;
