// Options of the event stream, their defaults, and validation with messages that say what to fix.
// Defaults give a clean stream (every adversarial share is 0) so each test turns on only what it checks.
import {
  MALFORMED_KINDS,
  typeChangeProblem,
  type ExtraFieldValue,
  type MalformedKind,
  type TypeChange,
} from "./adversarial";
import { simulatedClock, type Clock } from "./clock";
import {
  PAYMENT_EVENT_FIELDS,
  PAYMENT_EVENT_TYPES,
  type PaymentEventField,
  type PaymentEventType,
} from "./payment-events";
import type { Seed } from "./prng";

export interface PaymentStreamOptions {
  /** Same seed + same options = byte-identical stream. Default 42. */
  seed?: Seed;
  /** Number of merchants (distinct keys). Default 300. */
  merchants?: number;
  /** Number of customers. Default 20 per merchant. */
  customers?: number;
  /** Zipf exponent of merchant popularity: 0 = uniform, 1 = very skewed (hot keys). Default 0.6. */
  merchantSkew?: number;
  /** Relative weights of event types. Default authorization 0.45, settlement 0.40, refund 0.10, dispute 0.05. */
  typeWeights?: Partial<Record<PaymentEventType, number>>;
  /** Share of payments in a currency other than USD/EUR/GBP. Default 0.03. */
  otherCurrencyShare?: number;
  /** Share of well-formed events whose amount is zero or negative. Default 0. */
  nonPositiveAmountShare?: number;
  /** Source of "now" for each generated event. Default: simulatedClock() (2025-01-01, +10 ms per event). */
  clock?: Clock;
  /** Normal events happen 0..jitterMs before "now". Default 250. Must be below lateMinMs. */
  jitterMs?: number;
  /** Middle part of event_id and payment_id. Default: 8 hex digits derived from the seed. */
  idPrefix?: string;

  /** Share of well-formed events sent a second time (same key, byte-identical value). Default 0. */
  duplicateShare?: number;
  /** Of those, the share re-sent immediately after the original; the rest come later. Default 0.5. */
  duplicateImmediateShare?: number;
  /** A later re-send comes 1..duplicateMaxDelay messages after the original. Default 200. */
  duplicateMaxDelay?: number;

  /** Share of well-formed events whose event_time is far behind "now". Default 0. */
  lateShare?: number;
  /** Lateness of a late event is uniform in [lateMinMs, lateMaxMs]. Default 2 minutes. */
  lateMinMs?: number;
  /** Default 3 hours. */
  lateMaxMs?: number;

  /** Share of well-formed events held back and emitted after later events of the same merchant. Default 0. */
  outOfOrderShare?: number;
  /** A held event is overtaken by 1..outOfOrderWindow later events of its merchant. Default 5. */
  outOfOrderWindow?: number;
  /** A held event is released anyway after this many messages (rarely-seen merchants). Default 10000. */
  outOfOrderMaxHold?: number;

  /** Share of generated events sent as malformed payloads instead. Default 0. */
  malformedShare?: number;
  /** Relative weights of malformed kinds. Default: all equal. */
  malformedKinds?: Partial<Record<MalformedKind, number>>;

  /** Schema drift: fields added to drifted events, e.g. { campaign: "spring-sale" }. */
  extraFields?: Record<string, ExtraFieldValue>;
  /** Schema drift: fields whose type changes on drifted events, e.g. { amount: "non-numeric-string" }. */
  typeChanges?: Partial<Record<PaymentEventField, TypeChange>>;
  /** Share of well-formed events that drift (when extraFields/typeChanges are set). Default 1. */
  driftShare?: number;
  /** Drift starts at this generated-event index (0-based), like an upstream deploy mid-stream. Default 0. */
  driftStartAt?: number;

  /** Bound on remembered open/settled payments (for settlements, refunds, disputes). Default 10000. */
  maxOpenPayments?: number;
}

export interface ResolvedStreamOptions {
  seed: Seed;
  merchants: number;
  customers: number;
  merchantSkew: number;
  typeWeights: Record<PaymentEventType, number>;
  otherCurrencyShare: number;
  nonPositiveAmountShare: number;
  clock: Clock;
  jitterMs: number;
  idPrefix: string | undefined;
  duplicateShare: number;
  duplicateImmediateShare: number;
  duplicateMaxDelay: number;
  lateShare: number;
  lateMinMs: number;
  lateMaxMs: number;
  outOfOrderShare: number;
  outOfOrderWindow: number;
  outOfOrderMaxHold: number;
  malformedShare: number;
  malformedKinds: Record<MalformedKind, number>;
  extraFields: Record<string, ExtraFieldValue>;
  typeChanges: Partial<Record<PaymentEventField, TypeChange>>;
  driftShare: number;
  driftStartAt: number;
  maxOpenPayments: number;
}

export const DEFAULT_TYPE_WEIGHTS: Readonly<Record<PaymentEventType, number>> = {
  authorization: 0.45,
  settlement: 0.4,
  refund: 0.1,
  dispute: 0.05,
};

export class OptionsError extends RangeError {
  override name = "OptionsError";
}

function share(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (typeof v !== "number" || !(v >= 0 && v <= 1))
    throw new OptionsError(`${name} must be a share in [0, 1], got ${String(v)}`);
  return v;
}

function int(
  name: string,
  value: number | undefined,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new OptionsError(`${name} must be an integer in [${min}, ${max}], got ${String(v)}`);
  }
  return v;
}

function weights<K extends string>(
  name: string,
  keys: readonly K[],
  given: Partial<Record<K, number>> | undefined,
  fallback: Record<K, number>,
): Record<K, number> {
  for (const k of Object.keys(given ?? {})) {
    if (!(keys as readonly string[]).includes(k))
      throw new OptionsError(`${name}.${k}: unknown key; use ${keys.join(", ")}`);
  }
  const out = { ...fallback, ...given } as Record<K, number>;
  let total = 0;
  for (const k of keys) {
    const w = out[k];
    if (typeof w !== "number" || !(w >= 0) || !Number.isFinite(w))
      throw new OptionsError(`${name}.${k} must be a finite weight >= 0`);
    total += w;
  }
  if (total <= 0) throw new OptionsError(`${name}: at least one weight must be positive`);
  return out;
}

/** Fill in defaults and check every option; throws OptionsError naming the first bad one. */
export function resolveStreamOptions(o: PaymentStreamOptions = {}): ResolvedStreamOptions {
  const seed = o.seed ?? 42;
  if (!(typeof seed === "string" || (typeof seed === "number" && Number.isFinite(seed)))) {
    throw new OptionsError(`seed must be a finite number or a string`);
  }
  const merchants = int("merchants", o.merchants, 300, 1, 1_000_000);
  const lateMinMs = int("lateMinMs", o.lateMinMs, 2 * 60_000, 1);
  const lateMaxMs = int("lateMaxMs", o.lateMaxMs, 3 * 3_600_000, 1);
  if (lateMaxMs < lateMinMs)
    throw new OptionsError(`lateMaxMs (${lateMaxMs}) must be >= lateMinMs (${lateMinMs})`);
  const jitterMs = int("jitterMs", o.jitterMs, Math.min(250, lateMinMs - 1), 0);
  if (jitterMs >= lateMinMs) {
    throw new OptionsError(
      `jitterMs (${jitterMs}) must be below lateMinMs (${lateMinMs}) so late events stand apart`,
    );
  }
  const merchantSkew = o.merchantSkew ?? 0.6;
  if (typeof merchantSkew !== "number" || !(merchantSkew >= 0 && merchantSkew <= 5)) {
    throw new OptionsError(`merchantSkew must be in [0, 5], got ${String(merchantSkew)}`);
  }
  if (o.idPrefix !== undefined && !/^[A-Za-z0-9-]{1,32}$/.test(o.idPrefix)) {
    throw new OptionsError(`idPrefix must be 1-32 letters, digits or dashes`);
  }
  const extraFields = o.extraFields ?? {};
  for (const field of Object.keys(extraFields)) {
    if ((PAYMENT_EVENT_FIELDS as readonly string[]).includes(field)) {
      throw new OptionsError(
        `extraFields.${field}: already a payment event field; use typeChanges to change it`,
      );
    }
    if (field.length === 0) throw new OptionsError(`extraFields: empty field name`);
  }
  const typeChanges = o.typeChanges ?? {};
  for (const [field, change] of Object.entries(typeChanges)) {
    if (change === undefined) continue;
    const problem = typeChangeProblem(field, change as TypeChange);
    if (problem) throw new OptionsError(problem);
  }
  if (o.clock !== undefined && typeof o.clock?.now !== "function")
    throw new OptionsError("clock must have a now() method");

  return {
    seed,
    merchants,
    customers: int("customers", o.customers, merchants * 20, 1, 100_000_000),
    merchantSkew,
    typeWeights: weights("typeWeights", PAYMENT_EVENT_TYPES, o.typeWeights, DEFAULT_TYPE_WEIGHTS),
    otherCurrencyShare: share("otherCurrencyShare", o.otherCurrencyShare, 0.03),
    nonPositiveAmountShare: share("nonPositiveAmountShare", o.nonPositiveAmountShare, 0),
    clock: o.clock ?? simulatedClock(),
    jitterMs,
    idPrefix: o.idPrefix,
    duplicateShare: share("duplicateShare", o.duplicateShare, 0),
    duplicateImmediateShare: share("duplicateImmediateShare", o.duplicateImmediateShare, 0.5),
    duplicateMaxDelay: int("duplicateMaxDelay", o.duplicateMaxDelay, 200, 1),
    lateShare: share("lateShare", o.lateShare, 0),
    lateMinMs,
    lateMaxMs,
    outOfOrderShare: share("outOfOrderShare", o.outOfOrderShare, 0),
    outOfOrderWindow: int("outOfOrderWindow", o.outOfOrderWindow, 5, 1, 1000),
    outOfOrderMaxHold: int("outOfOrderMaxHold", o.outOfOrderMaxHold, 10_000, 1),
    malformedShare: share("malformedShare", o.malformedShare, 0),
    malformedKinds: weights("malformedKinds", MALFORMED_KINDS, o.malformedKinds, {
      "not-json": 1,
      "truncated-json": 1,
      "missing-field": 1,
      "wrong-type": 1,
    }),
    extraFields,
    typeChanges,
    driftShare: share("driftShare", o.driftShare, 1),
    driftStartAt: int("driftStartAt", o.driftStartAt, 0, 0),
    maxOpenPayments: int("maxOpenPayments", o.maxOpenPayments, 10_000, 1),
  };
}
