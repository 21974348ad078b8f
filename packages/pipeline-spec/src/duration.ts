// Durations in specs are strings with units ("10m", "30s", "1h30m") or the number 0. They are normalized
// to one canonical string so that "60s" and "1m" hash and diff as the same spec.

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000, ms: 1 } as const;
type TUnit = keyof typeof UNIT_MS;
const UNITS_DESCENDING: readonly TUnit[] = ["d", "h", "m", "s", "ms"];

const DURATION_PATTERN = /^(?:\d+(?:ms|d|h|m|s))+$/;
const PART_PATTERN = /(\d+)(ms|d|h|m|s)/g;

export const DURATION_HINT =
  "use a number with a unit: ms, s, m, h or d (e.g. 500ms, 30s, 10m, 1h30m, 1d) or 0";

/** Thrown by parseDuration for text that is not a duration. */
export class InvalidDurationError extends Error {
  override readonly name = "InvalidDurationError";
}

/** Why `value` is not a duration, or undefined when it is one. */
export function durationProblem(value: unknown): string | undefined {
  if (value === 0 || value === "0") return undefined;
  if (typeof value === "number") return `${value} has no unit: ${DURATION_HINT}`;
  if (typeof value !== "string")
    return `expected a duration, got ${value === null ? "null" : typeof value}: ${DURATION_HINT}`;
  if (!DURATION_PATTERN.test(value)) return `${JSON.stringify(value)} is not a duration: ${DURATION_HINT}`;
  let previous = -1;
  for (const [, , unit] of value.matchAll(PART_PATTERN)) {
    const rank = UNITS_DESCENDING.indexOf(unit as TUnit);
    if (rank <= previous)
      return `${JSON.stringify(value)} repeats or misorders its units: write larger units first, each once (e.g. 1h30m)`;
    previous = rank;
  }
  if (!Number.isSafeInteger(sumParts(value))) return `${JSON.stringify(value)} is too long a duration`;
  return undefined;
}

/** "10m" → 600000. Throws InvalidDurationError with the reason for anything else. */
export function parseDuration(value: string | number): number {
  const problem = durationProblem(value);
  if (problem) throw new InvalidDurationError(problem);
  return value === 0 || value === "0" ? 0 : sumParts(value as string);
}

/** 600000 → "10m": the largest unit that divides the value exactly; 0 → "0s". */
export function formatDuration(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0)
    throw new InvalidDurationError(`${ms} is not a whole, non-negative number of milliseconds`);
  if (ms === 0) return "0s";
  const unit = UNITS_DESCENDING.find((u) => ms % UNIT_MS[u] === 0) ?? "ms";
  return `${ms / UNIT_MS[unit]}${unit}`;
}

/** "60s" → "1m", "1h30m" → "90m", 0 → "0s". */
export function canonicalDuration(value: string | number): string {
  return formatDuration(parseDuration(value));
}

function sumParts(value: string): number {
  let total = 0;
  for (const [, amount, unit] of value.matchAll(PART_PATTERN))
    total += Number(amount) * UNIT_MS[unit as TUnit];
  return total;
}
