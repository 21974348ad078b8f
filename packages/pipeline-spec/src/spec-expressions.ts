// Where a spec holds expressions, with the path each error is reported under.
import type { TAggregate } from "./aggregate-schema";
import type { TCdc } from "./cdc-schema";
import type { TPathSegment } from "./errors";
import type { TExpressionKind } from "./expressions";
import { parseMeasure } from "./measure";
import type { TExpectation, TTransform } from "./spec-schema";

export interface TSpecExpression {
  path: TPathSegment[];
  expr: string;
  kind: TExpressionKind;
}

export interface TExpressionSections {
  transform?: TTransform | undefined;
  expectations?: TExpectation[] | undefined;
  aggregate?: TAggregate | undefined;
  cdc?: TCdc | undefined;
}

/** Every expression of a validated spec (for compiling). */
export function specExpressions(spec: TExpressionSections): TSpecExpression[] {
  const found: TSpecExpression[] = [];
  if (spec.transform?.filter !== undefined)
    found.push({ path: ["transform", "filter"], expr: spec.transform.filter, kind: "filter" });
  spec.expectations?.forEach((e, i) =>
    found.push({ path: ["expectations", i, "expr"], expr: e.expr, kind: "expectation" }),
  );
  for (const [name, measure] of Object.entries(spec.aggregate?.measures ?? {})) {
    if (measure.if !== undefined)
      found.push({ path: ["aggregate", "measures", name], expr: measure.if, kind: "condition" });
  }
  const deleteWhen = spec.cdc?.operation?.deleteWhen;
  if (deleteWhen !== undefined)
    found.push({ path: ["cdc", "operation", "deleteWhen"], expr: deleteWhen, kind: "delete condition" });
  return found;
}

/**
 * The expressions of a raw (unvalidated) spec, so they are type-checked even when the section around
 * them has an unrelated error (an expectation with a misspelled action still gets its expr checked).
 */
export function rawSpecExpressions(raw: Record<string, unknown>): TSpecExpression[] {
  const found: TSpecExpression[] = [];
  const add = (path: TPathSegment[], expr: unknown, kind: TExpressionKind) => {
    if (typeof expr === "string" && expr.trim() !== "") found.push({ path, expr: expr.trim(), kind });
  };
  const transform = asRecord(raw.transform);
  add(["transform", "filter"], transform?.filter, "filter");
  if (Array.isArray(raw.expectations)) {
    raw.expectations.forEach((e, i) => add(["expectations", i, "expr"], asRecord(e)?.expr, "expectation"));
  }
  for (const [name, measure] of Object.entries(asRecord(asRecord(raw.aggregate)?.measures) ?? {})) {
    const parsed = typeof measure === "string" ? parseMeasure(measure) : asRecord(measure);
    if (parsed && !("problem" in parsed)) add(["aggregate", "measures", name], parsed.if, "condition");
  }
  const cdc = asRecord(raw.cdc);
  add(["cdc", "deleteWhen"], cdc?.deleteWhen, "delete condition");
  add(["cdc", "operation", "deleteWhen"], asRecord(cdc?.operation)?.deleteWhen, "delete condition");
  return found;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
