// Decode: bytes → a JSON object. Anything else is a dead letter with the reason, never a crash.
import type { SourceRecord } from "../source/source";

export type Decoded = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;
/** The same escape in JSON.stringify output, not preceded by an escaped backslash (a backslash followed by "ud800" is plain text). */
const LONE_SURROGATE_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

export function decodeJson(record: SourceRecord): Decoded {
  if (record.value === null || record.value.length === 0)
    return { ok: false, reason: "empty payload (tombstone or null value)" };
  let value: unknown;
  const text = record.value.toString("utf8");
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not valid JSON: ${(err as Error).message}` };
  }
  // Postgres text and jsonb cannot hold U+0000: such a row would make its batch fail to commit on
  // every re-run and stop the pipeline for good. (A raw NUL byte is already invalid JSON.)
  if (text.includes("\\u0000"))
    return {
      ok: false,
      reason: `contains a \\u0000 (NUL) character, which Postgres text and jsonb cannot store`,
    };
  // Likewise an unpaired UTF-16 surrogate escape (e.g. "\ud800" alone): not valid in Postgres text
  // or jsonb. JSON.stringify escapes exactly those, so only suspicious payloads pay for the check.
  if (SURROGATE_ESCAPE.test(text) && LONE_SURROGATE_ESCAPE.test(JSON.stringify(value))) {
    return {
      ok: false,
      reason: `contains an unpaired UTF-16 surrogate (\\ud800–\\udfff escape without its pair), which Postgres text and jsonb cannot store`,
    };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      ok: false,
      reason: `expected a JSON object, got ${Array.isArray(value) ? "an array" : value === null ? "null" : typeof value}`,
    };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
