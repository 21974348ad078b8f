// The ways a real upstream misbehaves, applied to well-formed events: corrupt payloads (labelled by
// kind so a test knows exactly why each one must be dead-lettered), late event times, non-positive
// amounts for expectations, and schema drift (added fields, changed field types).
import { PAYMENT_EVENT_FIELDS, type PaymentEvent, type PaymentEventField } from "./payment-events";
import type { Prng } from "./prng";

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export const MALFORMED_KINDS = ["not-json", "truncated-json", "missing-field", "wrong-type"] as const;
/**
 * - `not-json`: plain text, XML, binary (invalid UTF-8) or an empty value
 * - `truncated-json`: a valid event's JSON cut short, so it never parses
 * - `missing-field`: valid JSON with one required field removed
 * - `wrong-type`: valid JSON with one required field of a type no lenient decoder could coerce
 */
export type MalformedKind = (typeof MALFORMED_KINDS)[number];

export interface Corruption {
  kind: MalformedKind;
  /** What exactly is wrong, e.g. "missing amount", "seq: string", "cut at 57/231 bytes", "binary". */
  detail: string;
  value: Buffer;
}

// Each replacement is unambiguous: an object, array or boolean where a string belongs, a non-numeric
// string where an integer belongs. (A number where a string belongs could be coerced by a lenient decoder.)
const WRONG_TYPES: ReadonlyArray<{
  field: PaymentEventField;
  as: string;
  value: (e: PaymentEvent) => JsonValue;
}> = [
  { field: "amount", as: "boolean", value: () => true },
  { field: "amount", as: "object", value: (e) => ({ value: e.amount, currency: e.currency }) },
  { field: "seq", as: "string", value: (e) => `seq-${e.seq}` },
  { field: "event_time", as: "object", value: (e) => ({ at: e.event_time }) },
  { field: "merchant_id", as: "array", value: (e) => [e.merchant_id] },
  { field: "type", as: "object", value: (e) => ({ name: e.type }) },
  { field: "currency", as: "boolean", value: () => false },
  { field: "event_id", as: "array", value: (e) => [e.event_id] },
];

/** Turn a well-formed event into a malformed payload of the given kind. */
export function corrupt(event: PaymentEvent, kind: MalformedKind, rng: Prng): Corruption {
  switch (kind) {
    case "not-json": {
      const variant = rng.int(0, 3);
      if (variant === 0) {
        const text = `${event.type} ${event.merchant_id} ${event.amount} ${event.currency} at ${event.event_time}`;
        return { kind, detail: "text", value: Buffer.from(text) };
      }
      if (variant === 1) {
        const xml = `<payment id="${event.event_id}" merchant="${event.merchant_id}" amount="${event.amount}"/>`;
        return { kind, detail: "xml", value: Buffer.from(xml) };
      }
      if (variant === 2) {
        // Starts with 0xff, which never begins a UTF-8 sequence, so it is not even text.
        const bytes = [0xff, 0xfe, ...Array.from({ length: rng.int(8, 40) }, () => rng.int(0, 255))];
        return { kind, detail: "binary", value: Buffer.from(bytes) };
      }
      return { kind, detail: "empty", value: Buffer.alloc(0) };
    }
    case "truncated-json": {
      // Any strict prefix of a JSON object lacks its closing brace, so it can never parse.
      const text = JSON.stringify(event);
      const cut = rng.int(1, text.length - 1);
      return { kind, detail: `cut at ${cut}/${text.length} bytes`, value: Buffer.from(text.slice(0, cut)) };
    }
    case "missing-field": {
      const field = rng.pick(PAYMENT_EVENT_FIELDS);
      const copy: Record<string, unknown> = { ...event };
      delete copy[field];
      return { kind, detail: `missing ${field}`, value: Buffer.from(JSON.stringify(copy)) };
    }
    case "wrong-type": {
      const change = rng.pick(WRONG_TYPES);
      const copy: Record<string, unknown> = { ...event, [change.field]: change.value(event) };
      return { kind, detail: `${change.field}: ${change.as}`, value: Buffer.from(JSON.stringify(copy)) };
    }
  }
}

/** A non-positive amount for expectation tests: sometimes zero, mostly the negated amount. */
export function nonPositiveAmount(amount: string, rng: Prng): string {
  if (rng.chance(0.3) || amount === "0.00") return "0.00";
  return amount.startsWith("-") ? amount : `-${amount}`;
}

// ---- schema drift -------------------------------------------------------------------------------

/** A constant, or computed per event (e.g. a campaign that depends on the merchant). */
export type ExtraFieldValue = JsonValue | ((event: PaymentEvent, rng: Prng) => JsonValue);

/**
 * How a field's type changes upstream:
 * - `number`: amount -> JSON number (42.1), event_time -> epoch milliseconds
 * - `string`: seq -> decimal string ("7")
 * - `non-numeric-string`: amount -> "USD 42.10", seq -> "#7"
 * - `null`: any field -> null
 * - a function: any field -> whatever it returns
 */
export type TypeChange =
  "number" | "string" | "non-numeric-string" | "null" | ((value: unknown, event: PaymentEvent) => JsonValue);

const TYPE_CHANGES_BY_FIELD: Partial<Record<PaymentEventField, readonly string[]>> = {
  amount: ["number", "non-numeric-string", "null"],
  seq: ["string", "non-numeric-string", "null"],
  event_time: ["number", "null"],
};

/** Why `change` cannot apply to `field`, or null if it can. */
export function typeChangeProblem(field: string, change: TypeChange): string | null {
  if (!(PAYMENT_EVENT_FIELDS as readonly string[]).includes(field)) {
    return `typeChanges.${field}: not a payment event field (${PAYMENT_EVENT_FIELDS.join(", ")})`;
  }
  if (typeof change === "function") return null;
  const allowed = TYPE_CHANGES_BY_FIELD[field as PaymentEventField] ?? ["null"];
  return allowed.includes(change)
    ? null
    : `typeChanges.${field}: "${change}" not supported; use one of ${allowed.join(", ")} or a function`;
}

function changeType(
  field: PaymentEventField,
  change: TypeChange,
  event: PaymentEvent,
  value: unknown,
): JsonValue {
  if (typeof change === "function") return change(value, event);
  if (change === "null") return null;
  if (field === "amount") return change === "number" ? Number(value) : `${event.currency} ${String(value)}`;
  if (field === "seq") return change === "string" ? String(value) : `#${String(value)}`;
  if (field === "event_time") return Date.parse(String(value));
  throw new Error(`unsupported type change ${change} for ${field}`); // prevented by typeChangeProblem
}

export interface DriftApplied {
  extraFields: string[];
  typeChanges: string[];
}

/** Add the extra fields and change field types on `payload` (in place). */
export function applyDrift(
  payload: Record<string, unknown>,
  event: PaymentEvent,
  extraFields: Readonly<Record<string, ExtraFieldValue>>,
  typeChanges: Readonly<Partial<Record<PaymentEventField, TypeChange>>>,
  rng: Prng,
): DriftApplied {
  const applied: DriftApplied = { extraFields: [], typeChanges: [] };
  for (const [field, spec] of Object.entries(extraFields)) {
    payload[field] = typeof spec === "function" ? spec(event, rng) : spec;
    applied.extraFields.push(field);
  }
  for (const [field, change] of Object.entries(typeChanges) as [
    PaymentEventField,
    TypeChange | undefined,
  ][]) {
    if (change === undefined) continue;
    payload[field] = changeType(field, change, event, payload[field]);
    applied.typeChanges.push(field);
  }
  return applied;
}
