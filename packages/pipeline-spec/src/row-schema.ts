// What a pipeline (or one of its outputs) checks and keeps of each row: expectations and the
// transform (filter, select). Shared by the top level and the outputs section (outputs-schema.ts).
import { z } from "zod";
import { ZColumnList, ZColumnRef, ZExpression } from "./spec-primitives";

export const EXPECTATION_ACTIONS = ["warn", "drop", "fail"] as const;

export const ZExpectation = z.strictObject({
  name: ZColumnRef,
  expr: ZExpression,
  /** warn: keep the row and count; drop: drop the row and count; fail: stop the pipeline at this batch. */
  action: z.enum(EXPECTATION_ACTIONS).default("warn"),
});

export const ZTransform = z.strictObject({
  /** CEL condition; rows for which it is false are counted as filtered. */
  filter: ZExpression.optional(),
  /** The contract fields written to the sink, in this order (default: all). */
  select: ZColumnList.optional(),
});
export type TTransform = z.output<typeof ZTransform>;
