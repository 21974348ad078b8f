// The outputs section: several results from one read. Each output has its own sink and mode, its own
// expectations and filter, and — where it aggregates — its own windows, watermark delay and allowed
// lateness; the source, contract, dedupe, shared expectations and dead letters stay the pipeline's.
// One batch commits every output in one transaction (docs/engine.md, "Several outputs").
import { z } from "zod";
import { ZAggregate } from "./aggregate-schema";
import { ZCdc } from "./cdc-schema";
import { ZSink } from "./sink-schema";
import { ZDuration } from "./spec-primitives";
import { ZExpectation, ZTransform } from "./row-schema";

const OUTPUT_NAME = /^[a-z][a-z0-9_]{0,31}$/;

/** Why `name` cannot name an output, or undefined. It labels state, progress and the console's graph. */
export function outputNameProblem(name: string): string | undefined {
  return OUTPUT_NAME.test(name)
    ? undefined
    : `${JSON.stringify(name)} is not a valid output name: use lowercase letters, digits and _, starting with a letter, at most 32 characters (e.g. fraud_view)`;
}

export const ZOutput = z.strictObject({
  description: z.string().max(2000).optional(),
  /** This output's watermark: the source's event time minus this delay (default: eventTime.watermarkDelay). */
  watermarkDelay: ZDuration.optional(),
  /** Checked after the pipeline's own expectations, on the rows that reach this output. */
  expectations: z.array(ZExpectation).default([]),
  /** filter: CEL over the row (after the join), false → counted as filtered in this output; select: the columns it writes. */
  transform: ZTransform.optional(),
  aggregate: ZAggregate.optional(),
  cdc: ZCdc.optional(),
  sink: ZSink,
});

export const MAX_OUTPUTS = 8;

export const ZOutputs = z.record(z.string(), ZOutput).superRefine((outputs, ctx) => {
  const names = Object.keys(outputs);
  if (names.length === 0)
    ctx.addIssue({
      code: "custom",
      message: "declare at least one output, or leave outputs out and use sink",
    });
  if (names.length > MAX_OUTPUTS)
    ctx.addIssue({
      code: "custom",
      message: `at most ${MAX_OUTPUTS} outputs per pipeline (got ${names.length}): split the pipeline`,
    });
});

export type TOutputSection = z.output<typeof ZOutput>;
