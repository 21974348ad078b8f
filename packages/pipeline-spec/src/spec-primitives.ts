// Small zod building blocks shared by the spec's sections: durations, names, column references,
// expressions and the "exactly one of" objects (sink, window, trigger).
import { z } from "zod";
import { DURATION_HINT, canonicalDuration, durationProblem, parseDuration } from "./duration";
import { tableNameProblem } from "./identifier";

function durationSchema(options: { positive: boolean }) {
  return z
    .union([z.string(), z.number()], { error: `expected a duration: ${DURATION_HINT}` })
    .transform((value, ctx) => {
      const problem = durationProblem(value);
      if (problem) {
        ctx.issues.push({ code: "custom", input: value, message: problem });
        return z.NEVER;
      }
      if (options.positive && parseDuration(value) === 0) {
        ctx.issues.push({ code: "custom", input: value, message: `must be longer than 0, e.g. 30s or 5m` });
        return z.NEVER;
      }
      return canonicalDuration(value);
    });
}

/** A duration ≥ 0, normalized to its canonical string ("60s" → "1m", 0 → "0s"). */
export const ZDuration = durationSchema({ positive: false });
/** A duration > 0, normalized like ZDuration. */
export const ZPositiveDuration = durationSchema({ positive: true });

const SLUG = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/** Pipeline names and team slugs: lowercase words joined by single hyphens, e.g. merchant-settlements. */
export const ZSlug = z
  .string()
  .max(63, { error: "at most 63 characters" })
  .refine((s) => SLUG.test(s), {
    error: (iss) =>
      `${JSON.stringify(iss.input)} is not a valid name: use lowercase letters and digits in words joined by single hyphens, starting with a letter (e.g. merchant-settlements)`,
  });

/** A sink table: `table` or `schema.table`, strict identifiers, never SQL. */
export const ZTableName = z.string().superRefine((name, ctx) => {
  const problem = tableNameProblem(name);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/** A reference to a column; whether it exists is a cross-field rule (it depends on the contract). */
export const ZColumnRef = z.string().min(1, { error: "a column name must not be empty" });

/** A non-empty list of distinct column references (keys, groupBy). */
export const ZColumnList = z
  .array(ZColumnRef)
  .min(1, { error: "list at least one column, e.g. [event_id]" })
  .superRefine((columns, ctx) => {
    columns.forEach((column, index) => {
      if (columns.indexOf(column) !== index) {
        ctx.addIssue({
          code: "custom",
          path: [index],
          message: `${JSON.stringify(column)} is listed twice: list each column once`,
        });
      }
    });
  });

/** A CEL expression's text; it is parsed and type-checked against the contract by validateSpec. */
export const ZExpression = z
  .string()
  .trim()
  .min(1, { error: "an expression must not be empty" })
  .max(4096, { error: "an expression must be at most 4096 characters" });

const ENV_NAME = /^[A-Z][A-Z0-9_]*$/;

/** The name of an environment variable that holds a secret; the secret itself never appears in a spec. */
export const ZEnvVarName = z.string().refine((s) => ENV_NAME.test(s), {
  error: (iss) =>
    `${JSON.stringify(iss.input)} is not an environment variable name: use UPPER_CASE letters, digits and _`,
});

/** Refinement for objects that must set exactly one of `keys` (sink, window, trigger). */
export function exactlyOneOf<T extends object>(keys: readonly (keyof T & string)[], example: string) {
  return (value: T, ctx: z.RefinementCtx) => {
    const present = keys.filter((k) => (value as Record<string, unknown>)[k] !== undefined);
    if (present.length !== 1) {
      const got = present.length === 0 ? "none" : present.join(" and ");
      ctx.addIssue({
        code: "custom",
        message: `set exactly one of ${keys.join(", ")} (got ${got}), e.g. ${example}`,
      });
    }
  };
}
