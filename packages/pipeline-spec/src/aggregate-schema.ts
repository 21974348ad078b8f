// The aggregate section: event-time windows, grouping, measures and the output mode. The engine's
// window operator arrives later (issue 4); the shape is validated now so specs written today keep working.
import { z } from "zod";
import { ZMeasure } from "./measure";
import { ZColumnRef, ZDuration, ZPositiveDuration, exactlyOneOf } from "./spec-primitives";

const ZSliding = z.strictObject({ size: ZPositiveDuration, slide: ZPositiveDuration });

export type TWindow =
  | { tumbling: string; sliding?: undefined }
  | { sliding: { size: string; slide: string }; tumbling?: undefined };

export const ZWindow = z
  .strictObject({ tumbling: ZPositiveDuration.optional(), sliding: ZSliding.optional() })
  .superRefine(
    exactlyOneOf(["tumbling", "sliding"], "{ tumbling: 5m } or { sliding: { size: 10m, slide: 5m } }"),
  )
  .transform((w) => w as TWindow);

export const OUTPUT_MODES = ["append", "update", "complete"] as const;
export type TOutputMode = (typeof OUTPUT_MODES)[number];

export const ZAggregate = z.strictObject({
  /** Absent: one running result per group (a materialized view keyed by groupBy). */
  window: ZWindow.optional(),
  groupBy: z
    .array(ZColumnRef)
    .default([])
    .superRefine((columns, ctx) => {
      columns.forEach((c, i) => {
        if (columns.indexOf(c) !== i)
          ctx.addIssue({
            code: "custom",
            path: [i],
            message: `${JSON.stringify(c)} is listed twice in groupBy`,
          });
      });
    }),
  /** Output column name → measure. */
  measures: z.record(z.string(), ZMeasure).refine((m) => Object.keys(m).length > 0, {
    error: 'declare at least one measure, e.g. measures: { events: "count()" }',
  }),
  /** append: a window is written once, when final; update: changed results are upserted each batch; complete: the whole result is rewritten. */
  outputMode: z.enum(OUTPUT_MODES).default("update"),
  /** How far behind the watermark a row may still update its window; later rows follow lateData. */
  allowedLateness: ZDuration.default("0s"),
});

export type TAggregate = z.output<typeof ZAggregate>;
