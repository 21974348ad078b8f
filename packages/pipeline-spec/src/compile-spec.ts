// compileSpec: everything the engine evaluates per row, prepared once per pipeline version. The engine
// converts each row once (toCelRow) and hands the result to every predicate.
import { celEnvironmentFor } from "./cel-environment";
import { celRowConverter, type TCelRow } from "./cel-row";
import { parseDuration } from "./duration";
import { SpecValidationError, formatPath } from "./errors";
import { compilePredicate, expressionProblem, fieldsUsedBy, type TCompiledPredicate } from "./expressions";
import { isPipelineDimension, type TChangelogDimension } from "./join-schema";
import type { TMeasure } from "./measure";
import { joinedContract } from "./output-views";
import { specExpressions } from "./spec-expressions";
import type { TPipelineSpec } from "./spec-schema";

export interface TCompiledExpectation extends TCompiledPredicate {
  readonly name: string;
  readonly action: "warn" | "drop" | "fail";
}

export interface TCompiledMeasure extends TMeasure {
  readonly name: string;
  /** Present for conditional measures: only rows that pass contribute. */
  readonly condition?: TCompiledPredicate;
}

/** Durations of the spec in milliseconds, so the engine never parses duration text itself. */
export interface TSpecTiming {
  watermarkDelayMs?: number;
  /** How long a partition may read nothing before it stops holding the watermark back. */
  idleTimeoutMs?: number;
  /** Absent when dedupe is bounded by the watermark (or there is no dedupe). */
  dedupeWithinMs?: number;
  windowSizeMs?: number;
  /** Equals windowSizeMs for tumbling windows. */
  windowSlideMs?: number;
  allowedLatenessMs: number;
  /** Absent for trigger: { availableNow: true }. */
  triggerEveryMs?: number;
  webhookTimeoutMs?: number;
  /** A join: how long a row waits for its dimension, and the dimension's watermark delay and idle timeout. */
  join?: { waitForMs: number; dimensionDelayMs: number; dimensionIdleTimeoutMs: number };
}

export interface TCompiledSpec {
  readonly spec: TPipelineSpec;
  /** Converts a contract-typed row for the predicates below: only the fields they read. */
  toCelRow(row: Readonly<Record<string, unknown>>): TCelRow;
  /** Contract fields read by any expression (what toCelRow converts). */
  readonly fieldsUsed: readonly string[];
  readonly filter?: TCompiledPredicate;
  /** In spec order. */
  readonly expectations: readonly TCompiledExpectation[];
  /** In measure-name order, like the output columns. */
  readonly measures: readonly TCompiledMeasure[];
  /** CDC: true when a change is a delete. */
  readonly deleteWhen?: TCompiledPredicate;
  /** A join's dimension: its delete condition over the dimension's contract. */
  readonly dimension?: {
    toCelRow(row: Readonly<Record<string, unknown>>): TCelRow;
    deleteWhen?: TCompiledPredicate;
  };
  readonly timing: TSpecTiming;
}

/** Compiles a validated spec. Throws SpecValidationError if an expression does not type-check. */
export function compileSpec(spec: TPipelineSpec): TCompiledSpec {
  // The joined row's fields (the source's plus a join's): the pipeline's own expectations and filter
  // use only the source's (validateSpec checks that), its aggregate and CDC may use the join's too.
  const contract = joinedContract(spec);
  const env = celEnvironmentFor(contract);
  const expressions = specExpressions(spec);
  const errors = expressions.flatMap((e) => {
    const message = expressionProblem(e.expr, env, e.kind);
    return message ? [{ path: formatPath(e.path), message }] : [];
  });
  if (errors.length > 0) throw new SpecValidationError(errors);

  const fieldsUsed = [...new Set(expressions.flatMap((e) => fieldsUsedBy(e.expr, env)))];
  const compile = (expr: string) => compilePredicate(expr, env);
  const deleteWhen = spec.cdc?.operation?.deleteWhen;
  return {
    spec,
    toCelRow: celRowConverter(contract, fieldsUsed),
    fieldsUsed,
    ...(spec.transform?.filter !== undefined ? { filter: compile(spec.transform.filter) } : {}),
    expectations: spec.expectations.map((e) => ({ ...compile(e.expr), name: e.name, action: e.action })),
    measures: Object.keys(spec.aggregate?.measures ?? {})
      .sort()
      .map((name) => {
        const measure = spec.aggregate?.measures[name] as TMeasure;
        return { ...measure, name, ...(measure.if !== undefined ? { condition: compile(measure.if) } : {}) };
      }),
    ...(deleteWhen !== undefined ? { deleteWhen: compile(deleteWhen) } : {}),
    ...(spec.join && !isPipelineDimension(spec.join.dimension)
      ? { dimension: compileDimension(spec.join.dimension) }
      : {}),
    timing: specTiming(spec),
  };
}

function compileDimension(dim: TChangelogDimension): NonNullable<TCompiledSpec["dimension"]> {
  if (dim.deleteWhen === undefined) return { toCelRow: celRowConverter(dim.contract, []) };
  const env = celEnvironmentFor(dim.contract);
  const problem = expressionProblem(dim.deleteWhen, env, "delete condition");
  if (problem) throw new SpecValidationError([{ path: "join.dimension.deleteWhen", message: problem }]);
  return {
    toCelRow: celRowConverter(dim.contract, fieldsUsedBy(dim.deleteWhen, env)),
    deleteWhen: compilePredicate(dim.deleteWhen, env),
  };
}

/** A partition that reads nothing for this long stops holding the watermark back. */
export const DEFAULT_IDLE_TIMEOUT = "1m";

export function specTiming(spec: TPipelineSpec): TSpecTiming {
  const window = spec.aggregate?.window;
  const size = window ? parseDuration(window.tumbling ?? window.sliding.size) : undefined;
  const timing: TSpecTiming = { allowedLatenessMs: parseDuration(spec.aggregate?.allowedLateness ?? 0) };
  if (spec.eventTime) {
    timing.watermarkDelayMs = parseDuration(spec.eventTime.watermarkDelay);
    timing.idleTimeoutMs = parseDuration(spec.eventTime.idleTimeout ?? DEFAULT_IDLE_TIMEOUT);
  }
  if (spec.dedupe && spec.dedupe.within !== "watermark")
    timing.dedupeWithinMs = parseDuration(spec.dedupe.within);
  if (size !== undefined) {
    timing.windowSizeMs = size;
    timing.windowSlideMs = window?.sliding ? parseDuration(window.sliding.slide) : size;
  }
  if (spec.trigger.every !== undefined) timing.triggerEveryMs = parseDuration(spec.trigger.every);
  if (spec.sink?.webhook) timing.webhookTimeoutMs = parseDuration(spec.sink.webhook.timeout);
  const dim = spec.join?.dimension;
  if (spec.join && dim)
    // A pipeline dimension's watermark is that pipeline's own, committed: no delay or idleness of its own.
    timing.join = {
      waitForMs: parseDuration(spec.join.waitFor),
      dimensionDelayMs: isPipelineDimension(dim) ? 0 : parseDuration(dim.eventTime.watermarkDelay),
      dimensionIdleTimeoutMs: isPipelineDimension(dim)
        ? 0
        : parseDuration(dim.eventTime.idleTimeout ?? DEFAULT_IDLE_TIMEOUT),
    };
  return timing;
}
