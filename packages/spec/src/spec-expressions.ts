// Where a spec holds expressions, with the path each error is reported under.
import type { TAggregate } from "./aggregate-schema";
import type { TCdc } from "./cdc-schema";
import type { TPathSegment } from "./errors";
import type { TExpressionKind } from "./expressions";
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

/** Every expression in the spec. `cdcShorthand`: the user wrote cdc.deleteWhen, so report errors there. */
export function specExpressions(spec: TExpressionSections, cdcShorthand = false): TSpecExpression[] {
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
  if (deleteWhen !== undefined) {
    const path = cdcShorthand ? ["cdc", "deleteWhen"] : ["cdc", "operation", "deleteWhen"];
    found.push({ path, expr: deleteWhen, kind: "delete condition" });
  }
  return found;
}
