// The CEL environment for one contract: every contract field is a variable of its contract type, so
// expressions are type-checked once, at validation, instead of failing per row.
//
// Two environments share the declarations. The checking one declares optional fields with their own
// type (so `card_country > 5` is still a type error); the running one declares them `dyn`, because the
// library rejects null for a typed variable at run time and an optional field is null when absent.
// `x == null` type-checks for every field type, and an int compares equal to a double (`amount == 0`),
// two additions to CEL's defaults that a contract with optional and decimal fields needs.
import { Environment } from "@marcbachmann/cel-js";
import type { TContract, TFieldType } from "./contract";
import { registerRe2Matches } from "./re2-matches";

/** The CEL type each contract type is exposed as. Decimals are doubles in expressions (see docs). */
export const CEL_TYPES: Record<TFieldType, string> = {
  string: "string",
  int: "int",
  decimal: "double",
  double: "double",
  boolean: "bool",
  timestamp: "google.protobuf.Timestamp",
  json: "dyn",
};

const NULLABLE_COMPARISONS = ["string", "int", "double", "bool", "google.protobuf.Timestamp"];

// Expressions are user input evaluated per row: keep them small and shallow.
const LIMITS = {
  maxAstNodes: 2_000,
  maxDepth: 64,
  maxListElements: 1_000,
  maxMapEntries: 1_000,
  maxCallArguments: 32,
};

function baseEnvironment(): Environment {
  const env = new Environment({ limits: LIMITS, homogeneousAggregateLiterals: true });
  // matches() runs on RE2 (linear time), not on a backtracking JavaScript RegExp: re2-matches.ts.
  registerRe2Matches(env);
  env.registerOperator("double == int", (a: unknown, b: unknown) => Number(a) === Number(b));
  for (const type of NULLABLE_COMPARISONS)
    env.registerOperator(`${type} == null`, (a: unknown, b: unknown) => a == null && b == null);
  return env;
}

/** Names CEL already binds (type names such as `type`, `string`, `int`): such fields get another variable name. */
const BUILTIN_NAMES = (() => {
  const env = new Environment();
  return (name: string) => env.hasVariable(name);
})();

export interface TCelEnvironment {
  /** Declares optional fields with their type; for check(). */
  readonly checking: Environment;
  /** Declares optional fields as dyn; for parse() and evaluation. */
  readonly running: Environment;
  /** Contract field → CEL variable name (the same, except for fields that shadow a CEL type name). */
  readonly variableOf: ReadonlyMap<string, string>;
  /** CEL variable name → contract field. */
  readonly fieldOf: ReadonlyMap<string, string>;
}

/** `type` → `_type`: contract fields cannot start with _, so the renamed variable never collides. */
export function celVariableName(field: string): string {
  return BUILTIN_NAMES(field) ? `_${field}` : field;
}

export function celEnvironmentFor(contract: Pick<TContract, "fields">): TCelEnvironment {
  const checking = baseEnvironment();
  const running = baseEnvironment();
  const variableOf = new Map<string, string>();
  const fieldOf = new Map<string, string>();
  for (const [field, spec] of Object.entries(contract.fields)) {
    const variable = celVariableName(field);
    variableOf.set(field, variable);
    fieldOf.set(variable, field);
    checking.registerVariable(variable, CEL_TYPES[spec.type]);
    running.registerVariable(variable, spec.optional ? "dyn" : CEL_TYPES[spec.type]);
  }
  return { checking, running, variableOf, fieldOf };
}
