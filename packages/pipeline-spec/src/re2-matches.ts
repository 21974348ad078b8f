// CEL's `matches()` in RE2 semantics, as the CEL specification says: linear time in the input, so a
// spec's regular expression cannot freeze the console or stall a worker (`^([a-z0-9_]+)+!$` over a
// long value backtracks for ever in a JavaScript RegExp). Matching runs on re2js, a pure JavaScript
// port of RE2 (docs/security.md compares it with the native `re2` binding).
//
// Why a rename: @marcbachmann/cel-js 8 runs `string.matches(string)` with a JavaScript RegExp, offers
// no way to plug another engine in, and refuses a second overload of the same signature. So each
// `.matches(` method call an expression's AST contains is handed to CEL as `.re2Matches(` — same
// receiver, argument and type — at the exact position the parser reports, and renamed back in every
// message a person reads. Drop this file when the library lets the regex engine be chosen.
import type { ASTNode, Environment } from "@marcbachmann/cel-js";
import { RE2JS } from "re2js";

export const RE2_MATCHES = "re2Matches";

/** Compiled patterns, kept for patterns built per row too (bounded). */
const compiled = new Map<string, RE2JS>();
const MAX_CACHED = 512;

function compile(pattern: string): RE2JS {
  let re = compiled.get(pattern);
  if (!re) {
    re = RE2JS.compile(pattern);
    if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value!);
    compiled.set(pattern, re);
  }
  return re;
}

/** Why `pattern` is not an RE2 regular expression, or undefined. */
export function re2Problem(pattern: string): string | undefined {
  try {
    compile(pattern);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

export function registerRe2Matches(env: Environment): void {
  env.registerFunction(`string.${RE2_MATCHES}(string): bool`, (text: string, pattern: string) => {
    let re: RE2JS;
    try {
      re = compile(pattern);
    } catch (err) {
      throw new Error(
        `invalid regular expression ${JSON.stringify(pattern)} (RE2 syntax): ${(err as Error).message}`,
      );
    }
    return re.test(text);
  });
}

export interface TMatchesCall {
  /** Where the method name `matches` is in the expression's text. */
  start: number;
  end: number;
  /** The pattern when it is a string literal (checked at validation); undefined when computed per row. */
  pattern: string | undefined;
}

/** Every `<receiver>.matches(<pattern>)` call in a parsed expression. */
export function findMatchesCalls(node: unknown, text: string, found: TMatchesCall[] = []): TMatchesCall[] {
  if (Array.isArray(node)) {
    for (const child of node) findMatchesCalls(child, text, found);
    return found;
  }
  if (typeof node !== "object" || node === null || !("op" in node)) return found;
  const ast = node as ASTNode;
  if (ast.op === "rcall") {
    const [name, receiver, args] = ast.args as [string, ASTNode, ASTNode[]];
    const arg = args[0];
    if (name === "matches" && args.length === 1 && arg) {
      // Between the receiver and the argument there is only `).matches(` with spaces.
      const between = text.slice(receiver.range.end, arg.range.start);
      const at = between.lastIndexOf("matches");
      if (at >= 0) {
        const start = receiver.range.end + at;
        const literal = arg.op === "value" && typeof arg.args === "string" ? arg.args : undefined;
        found.push({ start, end: start + "matches".length, pattern: literal });
      }
    }
  }
  findMatchesCalls(ast.args, text, found);
  return found;
}
