// Decode: bytes → a JSON object. Anything else is a dead letter with the reason, never a crash.
import type { SourceRecord } from "../source/source";

export type Decoded = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

export function decodeJson(record: SourceRecord): Decoded {
  if (record.value === null || record.value.length === 0) return { ok: false, reason: "empty payload (tombstone or null value)" };
  let value: unknown;
  try {
    value = JSON.parse(record.value.toString("utf8"));
  } catch (err) {
    return { ok: false, reason: `not valid JSON: ${(err as Error).message}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, reason: `expected a JSON object, got ${Array.isArray(value) ? "an array" : value === null ? "null" : typeof value}` };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
