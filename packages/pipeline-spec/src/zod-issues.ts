// Turns zod's issues into spec errors a pipeline owner can act on: the field, the value, the fix.
// Unknown keys get a "did you mean" from the schema's own key names.
import type { z } from "zod";
import { issue, type TPathSegment, type TSpecIssue } from "./errors";

type TZodIssue = z.core.$ZodIssue;

export function fromZodIssues(
  issues: readonly TZodIssue[],
  prefix: TPathSegment[],
  knownKeys: ReadonlySet<string>,
): TSpecIssue[] {
  return issues.flatMap((i) => fromZodIssue(i, prefix, knownKeys));
}

function fromZodIssue(i: TZodIssue, prefix: TPathSegment[], knownKeys: ReadonlySet<string>): TSpecIssue[] {
  const path = [...prefix, ...(i.path as TPathSegment[])];
  switch (i.code) {
    case "unrecognized_keys":
      return i.keys.map((key) => issue([...path, key], unknownKeyMessage(key, knownKeys)));
    case "invalid_union": {
      // Report the branch that matched the value's type (a string form vs an object form), not both;
      // of two object forms (a join's changelog or pipeline dimension), the one it nearly is.
      const branch = i.errors
        .filter((errors) => !errors.some((e) => e.path.length === 0 && e.code === "invalid_type"))
        .reduce<(typeof i.errors)[number] | undefined>(
          (best, errors) => (!best || errors.length < best.length ? errors : best),
          undefined,
        );
      if (branch) return fromZodIssues(branch, path, knownKeys);
      return [issue(path, i.message === "Invalid input" ? `unexpected value ${show(i.input)}` : i.message)];
    }
    case "invalid_key":
      return fromZodIssues(i.issues, path, knownKeys);
    case "invalid_type":
      if (i.input === undefined) return [issue(path, "required field is missing")];
      if (i.expected === "int") return [issue(path, `expected a whole number, got ${show(i.input)}`)];
      return [issue(path, customOr(i.message, `expected ${i.expected}, got ${show(i.input)}`))];
    case "invalid_value":
      return [
        issue(
          path,
          `${show(i.input)} is not allowed here: use ${i.values.map((v) => JSON.stringify(v)).join(" or ")}`,
        ),
      ];
    case "too_small":
      return [issue(path, customOr(i.message, tooSmall(i)))];
    case "too_big":
      return [
        issue(
          path,
          customOr(
            i.message,
            `must be at most ${String(i.maximum)}${i.origin === "string" ? " characters" : ""}`,
          ),
        ),
      ];
    default:
      return [issue(path, i.message)];
  }
}

function tooSmall(i: z.core.$ZodIssueTooSmall): string {
  if (i.origin === "array") return `list at least ${String(i.minimum)} item(s)`;
  if (i.origin === "string") return "must not be empty";
  return `must be ${i.inclusive ? "at least" : "greater than"} ${String(i.minimum)}, got ${show(i.input)}`;
}

/** zod's built-in messages start with "Invalid input" / "Too small"; ours don't. Keep ours. */
function customOr(message: string, fallback: string): string {
  return /^(Invalid|Too (small|big))/.test(message) ? fallback : message;
}

function unknownKeyMessage(key: string, knownKeys: ReadonlySet<string>): string {
  const suggestion = closest(key, knownKeys);
  return `unknown field ${JSON.stringify(key)}${suggestion ? `: did you mean ${JSON.stringify(suggestion)}?` : ": remove it (see docs/pipeline-spec.md for the fields)"}`;
}

function closest(word: string, candidates: ReadonlySet<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 4)) + 1;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(
        (row[j] ?? 0) + 1,
        (next[j - 1] ?? 0) + 1,
        (row[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    row = next;
  }
  return row[b.length] ?? 0;
}

function show(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "object" && value !== null) return Array.isArray(value) ? "a list" : "an object";
  return JSON.stringify(value);
}

/** Every object key a schema declares, for "did you mean" suggestions. */
export function schemaKeys(
  schema: z.core.$ZodType,
  into = new Set<string>(),
  seen = new Set<unknown>(),
): Set<string> {
  if (seen.has(schema)) return into;
  seen.add(schema);
  const def = schema._zod.def as unknown as Record<string, unknown>;
  const children: unknown[] = [];
  if (def.type === "object") {
    for (const [key, child] of Object.entries(def.shape as Record<string, unknown>)) {
      into.add(key);
      children.push(child);
    }
  }
  for (const k of ["innerType", "in", "out", "element", "valueType", "schema"]) children.push(def[k]);
  if (Array.isArray(def.options)) children.push(...def.options);
  for (const child of children) {
    if (child && typeof child === "object" && "_zod" in child)
      schemaKeys(child as z.core.$ZodType, into, seen);
  }
  return into;
}
