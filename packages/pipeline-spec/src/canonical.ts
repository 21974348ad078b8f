// The canonical form of a spec: its normalized value (defaults filled in, durations canonical, sink
// resolved) with keys sorted and undefined dropped. Two specs that mean the same thing have the same
// canonical JSON and so the same specHash; registering an unchanged spec is a no-op.
import { sha256Hex } from "./sha256";
import type { TPipelineSpec } from "./spec-schema";

/** A deep copy with object keys sorted (arrays keep their order: key and groupBy order is meaningful). */
export function canonicalizeSpec(spec: TPipelineSpec): TPipelineSpec {
  return sortKeys(spec) as TPipelineSpec;
}

/** Stable JSON text of the canonical form. */
export function canonicalJson(spec: TPipelineSpec): string {
  return JSON.stringify(canonicalizeSpec(spec));
}

/** sha256 (lowercase hex) of the canonical JSON. */
export function specHash(spec: TPipelineSpec): string {
  return sha256Hex(canonicalJson(spec));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const child = (value as Record<string, unknown>)[key];
    if (child !== undefined) out[key] = sortKeys(child);
  }
  return out;
}
