// A spec is read by a recursive parser (yaml, then zod): text nested thousands of levels deep
// ([[[[…, {"a":{"a":… ) overflows the stack or worse before any rule can object. A spec needs a
// handful of levels, so text nested deeper than MAX_NESTING is refused up front with where it got
// too deep — one linear pass over the text, before any parser sees it. Brackets inside quoted
// strings and comments do not count.
import type { TSpecError } from "./errors";

export const MAX_NESTING = 64;

export function nestingProblem(text: string, max = MAX_NESTING): TSpecError | null {
  let depth = 0;
  let line = 1;
  let column = 0;
  let quote: '"' | "'" | null = null;
  let comment = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    column++;
    if (ch === "\n") {
      line++;
      column = 0;
      comment = false;
      continue;
    }
    if (comment) continue;
    if (quote) {
      if (quote === '"' && ch === "\\") {
        i++;
        column++;
      } else if (ch === quote) {
        // YAML's single-quoted strings escape a quote by doubling it.
        if (quote === "'" && text[i + 1] === "'") {
          i++;
          column++;
        } else quote = null;
      }
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "#" && (i === 0 || /\s/.test(text[i - 1]!))) comment = true;
    else if (ch === "[" || ch === "{") {
      if (++depth > max)
        return {
          path: "",
          message: `the text is nested more than ${max} levels deep here; a pipeline spec needs only a few levels`,
          line,
          column,
        };
    } else if ((ch === "]" || ch === "}") && depth > 0) depth--;
  }
  return null;
}
