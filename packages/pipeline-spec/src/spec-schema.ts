// The pipeline spec's shape, section by section. This schema checks structure and fills defaults;
// rules that relate sections (a dedupe key must be a contract field, ...) and expression type-checking
// live in validate-spec.ts. Use validateSpec / parseSpec to accept a spec; ZPipelineSpec alone does not
// run the cross-field rules.
import { z } from "zod";
import { ZAggregate } from "./aggregate-schema";
import { ZCdc } from "./cdc-schema";
import { ZContract } from "./contract";
import { canonicalDuration, durationProblem, parseDuration } from "./duration";
import { resolveSink } from "./resolve-sink";
import { ZSink, type TResolvedSink } from "./sink-schema";
import { ZTargets } from "./targets";
import {
  ZColumnList,
  ZColumnRef,
  ZDuration,
  ZExpression,
  ZPositiveDuration,
  ZSlug,
  exactlyOneOf,
} from "./spec-primitives";

const KAFKA_TOPIC = /^[A-Za-z0-9._-]{1,249}$/;

export const ZKafkaSource = z.strictObject({
  topic: z.string().refine((t) => KAFKA_TOPIC.test(t), {
    error: (iss) => `${JSON.stringify(iss.input)} is not a Kafka topic name: use letters, digits, ., _ and -`,
  }),
  /**
   * Where a version that has read nothing yet starts: `latest` records the end offsets at its first run
   * in its checkpoint. A partition added to the topic later is read from its beginning either way.
   */
  startingOffsets: z.enum(["earliest", "latest"]).default("earliest"),
  /** Upper bound on offsets read per micro-batch, spread over partitions. */
  maxOffsetsPerTrigger: z.number().int().positive().max(10_000_000).default(10_000),
  /** Read only these partitions (default: all). */
  partitions: z
    .array(z.number().int().nonnegative())
    .min(1)
    .refine((ps) => new Set(ps).size === ps.length, { error: "list each partition once" })
    .optional(),
});

export const ZSource = z.strictObject({ kafka: ZKafkaSource });

export const ZEventTime = z.strictObject({
  /** A required timestamp field of the contract. */
  column: ZColumnRef,
  /** watermark = max(event time seen) − watermarkDelay. */
  watermarkDelay: ZDuration,
  /**
   * The watermark is the minimum over partitions of (max event time − delay); a partition that has
   * read no new records for this long stops holding it back (default 1m).
   */
  idleTimeout: ZPositiveDuration.optional(),
});

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
  sink: ZSink,
  trigger: ZTrigger.default({ every: "2s" }),
  /** Freshness and violation-rate targets the console and alerts hold the signals against (targets.ts). */
  targets: ZTargets.optional(),
};

export const ZPipelineSpecShape = z.strictObject(SPEC_SECTIONS);

/** The spec's sections as parsed, before defaults that depend on other sections. */
export type TSpecSections = z.output<typeof ZPipelineSpecShape>;
export type TPipelineSpecInput = z.input<typeof ZPipelineSpecShape>;

/** A valid, normalized spec: defaults filled in, durations canonical, sink mode and keys resolved. */
export type TPipelineSpec = Omit<TSpecSections, "sink"> & { sink: TResolvedSink };

/**
 * Structure plus defaults. Prefer validateSpec: this schema does not check cross-field rules or
 * expressions (ZValidPipelineSpec does, for tRPC inputs).
 */
export const ZPipelineSpec = ZPipelineSpecShape.transform((sections, ctx): TPipelineSpec => {
  const resolved = resolveSink(sections);
  if (!resolved.sink) {
    for (const i of resolved.issues)
      ctx.issues.push({ code: "custom", input: sections, path: i.path, message: i.message });
    return z.NEVER;
  }
  return { ...sections, sink: resolved.sink };
});

export type TEventTime = z.output<typeof ZEventTime>;
export type TDedupe = z.output<typeof ZDedupe>;
export type TExpectation = z.output<typeof ZExpectation>;
export type TTransform = z.output<typeof ZTransform>;
export type TKafkaSource = z.output<typeof ZKafkaSource>;
