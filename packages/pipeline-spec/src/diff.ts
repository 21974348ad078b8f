// diffSpecs: what changed between two versions of a spec, field by field, for change requests and the
// audit log. Both sides are compared in canonical form, so "60s" vs "1m" is no change. Named lists
// (expectations) are matched by name, so inserting one does not show every later one as changed.
import { canonicalizeSpec } from "./canonical";
import type { TPipelineSpec } from "./spec-schema";

export interface TSpecChange {
  /** Dotted path: "sink.postgres.key", "expectations[positive_amount].action", "contract.fields.campaign". */
  path: string;
  kind: "added" | "removed" | "changed";
  before?: unknown;
  after?: unknown;
}

export function diffSpecs(a: TPipelineSpec, b: TPipelineSpec): TSpecChange[] {
  const changes: TSpecChange[] = [];
  diffValues(canonicalizeSpec(a), canonicalizeSpec(b), "", changes);
  return changes;
}

type TNamed = { name: string } & Record<string, unknown>;

function diffValues(before: unknown, after: unknown, path: string, out: TSpecChange[]): void {
  if (before === undefined && after === undefined) return;
  if (before === undefined) return void out.push({ path, kind: "added", after });
  if (after === undefined) return void out.push({ path, kind: "removed", before });
  if (isNamedList(before) && isNamedList(after)) return diffNamedLists(before, after, path, out);
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const key of keys) diffValues(before[key], after[key], path === "" ? key : `${path}.${key}`, out);
    return;
  }
  if (JSON.stringify(before) !== JSON.stringify(after)) out.push({ path, kind: "changed", before, after });
}

function diffNamedLists(before: TNamed[], after: TNamed[], path: string, out: TSpecChange[]): void {
  const byName = (list: TNamed[]) => new Map(list.map((item) => [item.name, item]));
  const [was, now] = [byName(before), byName(after)];
  for (const name of new Set([...was.keys(), ...now.keys()]))
    diffValues(was.get(name), now.get(name), `${path}[${name}]`, out);
  const order = (list: TNamed[]) => list.map((item) => item.name).filter((n) => was.has(n) && now.has(n));
  if (JSON.stringify(order(before)) !== JSON.stringify(order(after))) {
    out.push({ path, kind: "changed", before: before.map((i) => i.name), after: after.map((i) => i.name) });
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isNamedList(value: unknown): value is TNamed[] {
  if (!Array.isArray(value) || value.length === 0) return false;
  const names = value.map((item) =>
    isObject(item) && typeof item.name === "string" ? item.name : undefined,
  );
  return names.every((n) => n !== undefined) && new Set(names).size === names.length;
}
