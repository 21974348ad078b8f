// Aggregate measures: "sum(amount)", "count()", "count_distinct(customer_id) if type == 'refund'".
// The short string form is what users write; the object form { fn, column, if } is the canonical one
// and what the engine reads.
import { z } from "zod";
import { ZExpression } from "./spec-primitives";

export const MEASURE_FUNCTIONS = ["sum", "count", "min", "max", "avg", "count_distinct"] as const;
export type TMeasureFunction = (typeof MEASURE_FUNCTIONS)[number];

export interface TMeasure {
  fn: TMeasureFunction;
  /** The contract field aggregated; absent only for count(). */
  column?: string;
  /** A CEL condition: only rows for which it is true contribute (`sum(amount) if type == 'refund'`). */
  if?: string;
}

const MEASURE_TEXT = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(\s*([^()\s]*)\s*\)\s*(?:\bif\b\s*(.*))?$/s;
const FUNCTION_HINT = `use one of ${MEASURE_FUNCTIONS.map((f) => (f === "count" ? "count()" : `${f}(column)`)).join(", ")}`;

/** Parses the string form; returns the measure or the reason it is not one. */
export function parseMeasure(text: string): TMeasure | { problem: string } {
  const match = MEASURE_TEXT.exec(text);
  if (!match) {
    return {
      problem: `${JSON.stringify(text)} is not a measure: ${FUNCTION_HINT}, optionally followed by "if <condition>"`,
    };
  }
  const [, fnName = "", column = "", condition] = match;
  if (!(MEASURE_FUNCTIONS as readonly string[]).includes(fnName)) {
    return { problem: `${JSON.stringify(fnName)} is not a measure function: ${FUNCTION_HINT}` };
  }
  const fn = fnName as TMeasureFunction;
  const shapeProblem = measureShapeProblem(fn, column);
  if (shapeProblem) return { problem: shapeProblem };
  if (condition !== undefined && condition.trim() === "") {
    return {
      problem: `${JSON.stringify(text)} has "if" without a condition: write e.g. sum(amount) if type == 'refund'`,
    };
  }
  return { fn, ...(column ? { column } : {}), ...(condition !== undefined ? { if: condition.trim() } : {}) };
}

function measureShapeProblem(fn: TMeasureFunction, column: string): string | undefined {
  if (fn === "count" && column)
    return `count(${column}) is not supported: use count() for rows, or count_distinct(${column})`;
  if (fn !== "count" && !column) return `${fn}() needs a column, e.g. ${fn}(amount)`;
  return undefined;
}

const ZMeasureText = z.string().transform((text, ctx): TMeasure => {
  const parsed = parseMeasure(text);
  if ("problem" in parsed) {
    ctx.issues.push({ code: "custom", input: text, message: parsed.problem });
    return z.NEVER;
  }
  return parsed;
});

const ZMeasureObject = z
  .strictObject({
    fn: z.enum(MEASURE_FUNCTIONS, { error: `not a measure function: ${FUNCTION_HINT}` }),
    column: z.string().min(1).optional(),
    if: ZExpression.optional(),
  })
  .superRefine((m, ctx) => {
    const problem = measureShapeProblem(m.fn, m.column ?? "");
    if (problem) ctx.addIssue({ code: "custom", path: ["column"], message: problem });
  });

export const ZMeasure = z.union([ZMeasureText, ZMeasureObject]);

/** The canonical text form, for display: { fn: "sum", column: "amount" } → "sum(amount)". */
export function formatMeasure(m: TMeasure): string {
  return `${m.fn}(${m.column ?? ""})${m.if ? ` if ${m.if}` : ""}`;
}
