// parseSpec: text (YAML or JSON) to a validated spec, with every error located at a line and column
// of the text, so the CLI and the console's editor can point at it.
import { LineCounter, isMap, isScalar, isSeq, parseDocument, visit, type Document } from "yaml";
import {
  SpecValidationError,
  formatPath,
  type TPathSegment,
  type TSpecError,
  type TSpecIssue,
} from "./errors";
import { nestingProblem } from "./nesting-depth";
import type { TPipelineSpec } from "./spec-schema";
import { checkSpec, type TValidationResult } from "./validate-spec";

export interface TParseOptions {
  /** yaml (default) also reads JSON, which is a subset of YAML; json insists on strict JSON. */
  format?: "yaml" | "json";
}

export function parseSpec(text: string, options: TParseOptions = {}): TValidationResult {
  // Before any recursive parser sees it (nesting-depth.ts says why).
  const tooDeep = nestingProblem(text);
  if (tooDeep) return { ok: false, errors: [tooDeep] };
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  let value: unknown;
  if (options.format === "json") {
    try {
      value = JSON.parse(text);
    } catch (error) {
      return { ok: false, errors: [jsonSyntaxError(text, error as Error)] };
    }
  } else {
    if (doc.errors.length > 0) {
      return {
        ok: false,
        errors: doc.errors.map((e) => {
          const { line, col } = lines.linePos(e.pos[0]);
          const message =
            e.code === "MULTIPLE_DOCS"
              ? "a spec file holds one document: remove the --- separator and the documents after it"
              : e.message.split("\n")[0];
          return { path: "", message: `YAML syntax error: ${message}`, line, column: col };
        }),
      };
    }
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      // The yaml library refuses aliases that expand too much (a "billion laughs" bomb).
      return { ok: false, errors: [aliasError(doc, lines, error as Error)] };
    }
  }
  if (value === null || value === undefined)
    return { ok: false, errors: [{ path: "", message: "the spec is empty" }] };
  const { spec, issues } = checkSpec(value);
  if (spec) return { ok: true, spec };
  // JSON is valid YAML, so the same document gives positions for JSON specs too.
  if (doc.errors.length > 0) return { ok: false, errors: issues.map(unlocated) };
  // In the order of the text, so the CLI reads top to bottom; errors without a position keep theirs.
  const located = issues.map((i) => locate(i, doc, lines));
  const key = (e: TSpecError) => (e.line ?? 0) * 1e6 + (e.column ?? 0);
  return { ok: false, errors: located.sort((a, b) => key(a) - key(b)) };
}

/** Aliases may expand to at most this many nodes each (the yaml library's own guard). */
const MAX_ALIAS_COUNT = 50;

/** An alias bomb, located at the first alias of the document. */
function aliasError(doc: Document, lines: LineCounter, error: Error): TSpecError {
  let offset: number | undefined;
  visit(doc, {
    Alias(_, node) {
      offset = node.range?.[0];
      return visit.BREAK;
    },
  });
  const message = /alias/i.test(error.message)
    ? `YAML aliases expand to too much (more than ${MAX_ALIAS_COUNT} nodes per alias): write the values out, a spec needs no aliases that large`
    : `YAML could not be read: ${error.message.split("\n")[0]}`;
  if (offset === undefined) return { path: "", message };
  const { line, col } = lines.linePos(offset);
  return { path: "", message, line, column: col };
}

/** parseSpec that throws SpecValidationError (with every error) instead of returning them. */
export function parseSpecOrThrow(text: string, options: TParseOptions = {}): TPipelineSpec {
  const result = parseSpec(text, options);
  if (!result.ok) throw new SpecValidationError(result.errors);
  return result.spec;
}

function unlocated(i: TSpecIssue): TSpecError {
  return { path: formatPath(i.path), message: i.message };
}

/** The position of the deepest node on the issue's path that exists in the document. */
function locate(i: TSpecIssue, doc: Document, lines: LineCounter): TSpecError {
  let node: unknown = doc.contents;
  let offset: number | undefined = rangeStart(node);
  for (const segment of i.path) {
    const next = child(node, segment);
    if (!next) break;
    offset = rangeStart(next.value) ?? next.keyOffset ?? offset;
    node = next.value;
  }
  if (offset === undefined) return unlocated(i);
  const { line, col } = lines.linePos(offset);
  return { ...unlocated(i), line, column: col };
}

function child(node: unknown, segment: TPathSegment): { value: unknown; keyOffset?: number } | undefined {
  if (isMap(node)) {
    const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
    if (!pair) return undefined;
    return { value: pair.value, keyOffset: rangeStart(pair.key) };
  }
  if (isSeq(node) && typeof segment === "number") {
    const item = node.items[segment];
    return item === undefined ? undefined : { value: item };
  }
  return undefined;
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as { range?: [number, number, number] } | null)?.range;
  return range ? range[0] : undefined;
}

function jsonSyntaxError(text: string, error: Error): TSpecError {
  const message = `JSON syntax error: ${error.message.replace(/\s+/g, " ")}`;
  const lineCol = /line (\d+) column (\d+)/.exec(error.message);
  if (lineCol) return { path: "", message, line: Number(lineCol[1]), column: Number(lineCol[2]) };
  const offset = jsonErrorOffset(text, error.message);
  if (offset === undefined) return { path: "", message };
  const before = text.slice(0, offset).split("\n");
  return { path: "", message, line: before.length, column: (before.at(-1) ?? "").length + 1 };
}

/** V8 gives either "at position N" or the unexpected token with a snippet of the text around it. */
function jsonErrorOffset(text: string, message: string): number | undefined {
  const position = /position (\d+)/.exec(message);
  if (position) return Number(position[1]);
  const token = /^Unexpected token '(.)', (?:\.\.\.)?"([\s\S]*?)"(?:\.\.\.)? is not valid JSON/.exec(message);
  const at = token?.[2] ? text.indexOf(token[2]) : -1;
  return token?.[1] && token[2] && at >= 0 ? at + token[2].indexOf(token[1]) : undefined;
}
