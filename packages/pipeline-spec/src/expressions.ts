// CEL expressions (filters, expectations, measure conditions, CDC delete conditions): checked once
// against the contract, compiled once, evaluated per row by the library's prepared evaluator (no eval,
// no new Function). A row that makes an expression fail at run time (a null optional field used in
// arithmetic) counts as "not true": the filter drops it, the expectation is violated.
import type { ASTNode } from "@marcbachmann/cel-js";
import type { TCelEnvironment } from "./cel-environment";
import type { TCelRow } from "./cel-row";
import { findMatchesCalls, re2Problem, RE2_MATCHES } from "./re2-matches";

export type TExpressionKind = "filter" | "expectation" | "condition" | "delete condition";

export interface TCompiledPredicate {
  /** The expression as written in the spec. */
  readonly expr: string;
  /** True only when the expression evaluates to true; false for false, null and evaluation errors. */
  test(row: TCelRow): boolean;
  /** The raw outcome, for showing why a row failed (dead-letter reasons, the console's sample rows). */
  evaluate(row: TCelRow): { ok: true; value: unknown } | { ok: false; error: string };
}

interface TPrepared {
  /** The text handed to CEL: fields that shadow CEL names renamed (type → _type), `.matches(` → RE2's. */
  text: string;
  /** The literal patterns of its `matches()` calls. */
  patterns: string[];
  /** Maps an offset in `text` back to the user's text, for error columns. */
  toOriginalOffset(offset: number): number;
}

/**
 * Renames variables that shadow CEL built-ins, and `matches()` to its RE2 implementation
 * (re2-matches.ts). Throws the library's ParseError on a syntax error.
 */
function prepare(expr: string, env: TCelEnvironment): TPrepared {
  const renames: { start: number; end: number; to: string }[] = [];
  const { ast } = env.checking.parse(expr);
  visitIdentifiers(ast, (name, start, end) => {
    const variable = env.variableOf.get(name);
    if (variable !== undefined && variable !== name) renames.push({ start, end, to: variable });
  });
  const calls = findMatchesCalls(ast, expr);
  for (const call of calls) renames.push({ start: call.start, end: call.end, to: RE2_MATCHES });
  renames.sort((a, b) => a.start - b.start);
  let text = "";
  let cursor = 0;
  const shifts: { at: number; by: number }[] = [];
  for (const r of renames) {
    text += expr.slice(cursor, r.start) + r.to;
    shifts.push({ at: text.length, by: r.to.length - (r.end - r.start) });
    cursor = r.end;
  }
  text += expr.slice(cursor);
  const toOriginalOffset = (offset: number) =>
    offset - shifts.filter((s) => s.at <= offset).reduce((n, s) => n + s.by, 0);
  const patterns = calls.flatMap((c) => (c.pattern === undefined ? [] : [c.pattern]));
  return { text, toOriginalOffset, patterns };
}

/** The contract fields an expression reads (so a row converts only those). */
export function fieldsUsedBy(expr: string, env: TCelEnvironment): string[] {
  const used = new Set<string>();
  visitIdentifiers(env.checking.parse(expr).ast, (name) => {
    if (env.variableOf.has(name)) used.add(name);
  });
  return [...used];
}

function visitIdentifiers(node: unknown, visit: (name: string, start: number, end: number) => void): void {
  if (Array.isArray(node)) {
    for (const child of node) visitIdentifiers(child, visit);
    return;
  }
  if (typeof node !== "object" || node === null || !("op" in node)) return;
  const ast = node as ASTNode;
  if (ast.op === "id") visit(ast.args, ast.range.start, ast.range.end);
  else visitIdentifiers(ast.args, visit);
}

interface TCelError {
  name?: string;
  summary?: string;
  message: string;
  code?: string;
  range?: { start: number; end: number };
}

/** Why `expr` is not a valid boolean expression over this contract, or undefined. Never evaluates it. */
export function expressionProblem(
  expr: string,
  env: TCelEnvironment,
  kind: TExpressionKind,
): string | undefined {
  let prepared: TPrepared;
  try {
    prepared = prepare(expr, env);
  } catch (error) {
    return describeError(expr, error as TCelError, (o) => o, env);
  }
  const result = env.checking.check(prepared.text);
  if (!result.valid) return describeError(expr, result.error as TCelError, prepared.toOriginalOffset, env);
  for (const pattern of prepared.patterns) {
    const problem = re2Problem(pattern);
    if (problem)
      return `matches(${JSON.stringify(pattern)}) in ${JSON.stringify(expr)} is not an RE2 regular expression: ${problem} (specs accept RE2 syntax: no lookaround or backreferences; docs/pipeline-spec.md)`;
  }
  if (result.type !== "bool" && result.type !== "dyn") {
    return `${JSON.stringify(expr)} returns ${result.type}, but ${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind} must return true or false: compare it, e.g. ${exampleFor(kind)}`;
  }
  return undefined;
}

/** Compiles a checked expression. Call expressionProblem first; this throws on invalid input. */
export function compilePredicate(expr: string, env: TCelEnvironment): TCompiledPredicate {
  const run = env.running.parse(prepare(expr, env).text);
  return {
    expr,
    test(row) {
      try {
        return run(row) === true;
      } catch {
        return false;
      }
    },
    evaluate(row) {
      try {
        return { ok: true, value: run(row) };
      } catch (error) {
        return { ok: false, error: renameBack((error as TCelError).summary ?? String(error), env) };
      }
    },
  };
}

function describeError(
  expr: string,
  error: TCelError,
  toOriginal: (offset: number) => number,
  env: TCelEnvironment,
): string {
  const summary = renameBack(error.summary ?? error.message.split("\n")[0] ?? "invalid expression", env);
  const column = error.range ? ` at column ${toOriginal(error.range.start) + 1}` : "";
  const unknown = /^Unknown variable: (\S+)/.exec(summary);
  if (unknown) {
    const fields = [...env.variableOf.keys()].sort().join(", ");
    return `unknown field ${JSON.stringify(unknown[1])}${column} in ${JSON.stringify(expr)}: expressions can use the contract's fields (${fields})`;
  }
  const hint = /double [+*/%-] int|int [+*/%-] double/.test(summary)
    ? " (decimal and double fields are doubles in expressions: write 1.0 rather than 1 in arithmetic)"
    : /double [<>=!]+ string|string [<>=!]+ double/.test(summary)
      ? " (decimal and double fields are numbers in expressions: compare them with numbers, e.g. amount > 0)"
      : "";
  const label = error.name === "ParseError" ? "syntax error" : "type error";
  return `${label}: ${summary}${column} in ${JSON.stringify(expr)}${hint}`;
}

function renameBack(text: string, env: TCelEnvironment): string {
  return text
    .replace(/\b_[a-z][a-z0-9_]*\b/g, (name) => env.fieldOf.get(name) ?? name)
    .replaceAll(RE2_MATCHES, "matches");
}

function exampleFor(kind: TExpressionKind): string {
  return kind === "delete condition"
    ? "op == 'D'"
    : kind === "filter"
      ? "type in ['settlement', 'refund']"
      : "amount > 0";
}
