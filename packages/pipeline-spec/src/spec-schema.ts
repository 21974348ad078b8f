// The pipeline spec's shape, section by section. This schema checks structure and fills defaults;
// rules that relate sections (a dedupe key must be a contract field, ...) and expression type-checking
// live in validate-spec.ts. Use validateSpec / parseSpec to accept a spec; ZPipelineSpec alone does not
// run the cross-field rules.
import { z } from "zod";
import { ZAggregate } from "./aggregate-schema";
import { ZCdc } from "./cdc-schema";
import { ZContract } from "./contract";
import { ZDedupe } from "./dedupe-schema";
import { resolveSinks, type TResolvedOutput } from "./resolve-sink";
import { ZSink, type TResolvedSink } from "./sink-schema";
import { ZTargets } from "./targets";
import { ZEventTime, ZKafkaSource, ZSource } from "./source-schema";
import { ZExpectation, ZTransform } from "./row-schema";
import { ZJoin } from "./join-schema";
import { ZOutputs } from "./outputs-schema";
import { ZPositiveDuration, ZSlug, exactlyOneOf } from "./spec-primitives";

export { ZEventTime, ZKafkaSource, ZSource } from "./source-schema";
export { EXPECTATION_ACTIONS, ZExpectation, ZTransform, type TTransform } from "./row-schema";
export { ZDedupe, type TDedupe } from "./dedupe-schema";
export type { TResolvedOutput } from "./resolve-sink";

export type TTrigger =
  { every: string; availableNow?: undefined } | { availableNow: true; every?: undefined };

export const ZTrigger = z
  .strictObject({ every: ZPositiveDuration.optional(), availableNow: z.literal(true).optional() })
  .superRefine(exactlyOneOf(["every", "availableNow"], "{ every: 2s } or { availableNow: true }"))
  .transform((t) => t as TTrigger);

/** Top-level sections, each parsed on its own by validateSpec so one broken section hides no other error. */
export const SPEC_SECTIONS = {
  name: ZSlug,
  owner: ZSlug,
  description: z.string().max(2000).optional(),
  source: ZSource,
  format: z.literal("json", { error: "format must be json (the only format for now)" }).default("json"),
  contract: ZContract,
  eventTime: ZEventTime.optional(),
  dedupe: ZDedupe.optional(),
  expectations: z.array(ZExpectation).default([]),
  transform: ZTransform.optional(),
  aggregate: ZAggregate.optional(),
  cdc: ZCdc.optional(),
  /** Rows behind the watermark beyond allowedLateness: dead letters with reason late, or dropped and counted. */
  lateData: z.enum(["deadLetter", "drop"]).default("deadLetter"),
  /** Enrich each row with a dimension version valid at its event time (join-schema.ts). */
  join: ZJoin.optional(),
  /** Exactly one of sink (one result) or outputs (several, each with its own sink). */
  sink: ZSink.optional(),
  outputs: ZOutputs.optional(),
  trigger: ZTrigger.default({ every: "2s" }),
  /** Freshness and violation-rate targets the console and alerts hold the signals against (targets.ts). */
  targets: ZTargets.optional(),
};

export const ZPipelineSpecShape = z.strictObject(SPEC_SECTIONS);

/** The spec's sections as parsed, before defaults that depend on other sections. */
export type TSpecSections = z.output<typeof ZPipelineSpecShape>;
export type TPipelineSpecInput = z.input<typeof ZPipelineSpecShape>;

/**
 * A valid, normalized spec: defaults filled in, durations canonical, sink mode and keys resolved.
 * Exactly one of `sink` and `outputs` is set; `outputViews` (output-views.ts) gives every output,
 * the only one of a spec with a top-level sink included.
 */
export type TPipelineSpec = Omit<TSpecSections, "sink" | "outputs"> & {
  sink?: TResolvedSink;
  outputs?: Record<string, TResolvedOutput>;
};

/** A spec with one result (a top-level sink): what each output is to the engine's operators. */
export type TSingleOutputSpec = TPipelineSpec & { sink: TResolvedSink; outputs?: undefined };

/**
 * Structure plus defaults. Prefer validateSpec: this schema does not check cross-field rules or
 * expressions (ZValidPipelineSpec does, for tRPC inputs).
 */
export const ZPipelineSpec = ZPipelineSpecShape.transform((sections, ctx): TPipelineSpec => {
  const { sink: _sink, outputs: _outputs, ...rest } = sections;
  const resolved = resolveSinks(sections);
  if (resolved.issues.length > 0) {
    for (const i of resolved.issues)
      ctx.issues.push({ code: "custom", input: sections, path: i.path, message: i.message });
    return z.NEVER;
  }
  return {
    ...rest,
    ...(resolved.sink ? { sink: resolved.sink } : {}),
    ...(resolved.outputs ? { outputs: resolved.outputs } : {}),
  };
});

export type TEventTime = z.output<typeof ZEventTime>;
export type TExpectation = z.output<typeof ZExpectation>;
export type TKafkaSource = z.output<typeof ZKafkaSource>;
