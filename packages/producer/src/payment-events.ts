// The payment event schema and a generator of realistic, well-formed events: authorizations that are
// later settled (same amount, currency and payment_id), settled payments that are sometimes refunded or
// disputed, a few hundred merchants with skewed popularity, and per-merchant sequence numbers.
// Adversarial changes (late, malformed, drift, ...) are applied on top, in adversarial.ts.
import { Prng, WeightedPicker } from "./prng";

export const PAYMENT_EVENT_TYPES = ["authorization", "settlement", "refund", "dispute"] as const;
export type PaymentEventType = (typeof PAYMENT_EVENT_TYPES)[number];

/** One payment event as it appears on the wire (JSON object, fields in this order). */
export interface PaymentEvent {
  /** Unique per event; a producer retry (duplicate) repeats it. Stable for a given seed and options. */
  event_id: string;
  type: PaymentEventType;
  /** Kafka message key, so one merchant's events stay in one partition. */
  merchant_id: string;
  /** Per-merchant sequence: 1, 2, 3, ... over that merchant's well-formed events, without gaps. */
  seq: number;
  /** Ties an authorization to its settlement, refund and dispute. */
  payment_id: string;
  customer_id: string;
  /** Decimal string with exactly two fraction digits, e.g. "42.10" (strings keep decimals exact). */
  amount: string;
  /** ISO 4217 code, mostly USD/EUR/GBP. */
  currency: string;
  /** ISO 3166-1 alpha-2 country of the card holder. */
  card_country: string;
  /** When the business event happened: ISO-8601 UTC with milliseconds, e.g. 2025-01-01T00:00:00.000Z. */
  event_time: string;
}

export const PAYMENT_EVENT_FIELDS = [
  "event_id",
  "type",
  "merchant_id",
  "seq",
  "payment_id",
  "customer_id",
  "amount",
  "currency",
  "card_country",
  "event_time",
] as const satisfies readonly (keyof PaymentEvent)[];
export type PaymentEventField = (typeof PAYMENT_EVENT_FIELDS)[number];

export const MAIN_CURRENCIES = ["USD", "EUR", "GBP"] as const;
export const OTHER_CURRENCIES = ["CAD", "AUD", "CHF", "SEK", "NOK", "PLN", "SGD"] as const;
const MAIN_CURRENCY_WEIGHTS = [0.6, 0.25, 0.15];
const CARD_COUNTRIES = ["US", "GB", "DE", "FR", "NL", "ES", "IT", "CA", "AU", "BR"] as const;
const CARD_COUNTRY_WEIGHTS = [0.45, 0.15, 0.1, 0.08, 0.05, 0.05, 0.04, 0.04, 0.02, 0.02];

const AMOUNT_RE = /^-?\d+\.\d{2}$/;
const EVENT_TIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export type ValidationResult =
  { ok: true; event: PaymentEvent; extraFields: string[] } | { ok: false; errors: string[] };

/**
 * Strict check against the base schema above. Unknown extra fields are allowed (schema drift is not
 * malformation) and reported in `extraFields`. Non-positive amounts are valid here: they are a business
 * expectation, not a schema violation.
 */
export function validatePaymentEvent(value: unknown): ValidationResult {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, errors: ["not a JSON object"] };
  }
  const v = value as Record<string, unknown>;
  const errors: string[] = [];
  const str = (field: PaymentEventField, re?: RegExp) => {
    const x = v[field];
    if (x === undefined) errors.push(`${field}: missing`);
    else if (typeof x !== "string" || x.length === 0) errors.push(`${field}: expected a non-empty string`);
    else if (re && !re.test(x)) errors.push(`${field}: bad format ${JSON.stringify(x)}`);
  };
  str("event_id");
  if (v.type === undefined) errors.push("type: missing");
  else if (!PAYMENT_EVENT_TYPES.includes(v.type as PaymentEventType)) errors.push("type: unknown event type");
  str("merchant_id");
  if (v.seq === undefined) errors.push("seq: missing");
  else if (typeof v.seq !== "number" || !Number.isSafeInteger(v.seq) || v.seq < 1) {
    errors.push("seq: expected a positive integer");
  }
  str("payment_id");
  str("customer_id");
  str("amount", AMOUNT_RE);
  str("currency", /^[A-Z]{3}$/);
  str("card_country", /^[A-Z]{2}$/);
  str("event_time", EVENT_TIME_RE);
  if (
    typeof v.event_time === "string" &&
    EVENT_TIME_RE.test(v.event_time) &&
    !Number.isFinite(Date.parse(v.event_time))
  ) {
    errors.push("event_time: not a real date");
  }
  if (errors.length > 0) return { ok: false, errors };
  const known = new Set<string>(PAYMENT_EVENT_FIELDS);
  return {
    ok: true,
    event: v as unknown as PaymentEvent,
    extraFields: Object.keys(v).filter((k) => !known.has(k)),
  };
}

/** Decode a Kafka message value (UTF-8 JSON) and validate it; what a strict consumer would do. */
export function decodePaymentEvent(value: Buffer | Uint8Array | string | null): ValidationResult {
  if (value === null) return { ok: false, errors: ["null value"] };
  let text: string;
  try {
    text = typeof value === "string" ? value : new TextDecoder("utf-8", { fatal: true }).decode(value);
  } catch {
    return { ok: false, errors: ["not valid UTF-8"] };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { ok: false, errors: [`invalid JSON: ${(e as Error).message}`] };
  }
  return validatePaymentEvent(parsed);
}

/** Format integer cents as a two-decimal string: 4210 -> "42.10", -5 -> "-0.05". */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}

/**
 * The id of customer `n` (1-based) of `customers`: `cus_` and at least 6 digits. The payment stream and
 * the customer change feed (customer-changes.ts) share it, so the demo's join of payments with the
 * change feed finds the same customers when both run over the same number of them.
 */
export function customerId(n: number, customers: number): string {
  return `cus_${String(n).padStart(Math.max(6, String(customers).length), "0")}`;
}

export interface PaymentEventGeneratorOptions {
  seed: Prng;
  merchants: number;
  customers: number;
  /** Zipf exponent for merchant popularity: 0 = uniform, 1 = a few very hot merchants. */
  merchantSkew: number;
  typeWeights: Record<PaymentEventType, number>;
  otherCurrencyShare: number;
  /** Normal (not late) events happen 0..jitterMs before the clock reading, like a short network hop. */
  jitterMs: number;
  /** Prefix of event_id and payment_id; defaults to a tag derived from the seed. */
  idPrefix: string;
  /** Bound on remembered open (unsettled) and settled payments, so a long run uses bounded memory. */
  maxOpenPayments: number;
}

interface Payment {
  paymentId: string;
  merchant: number;
  customer: number;
  amountCents: number;
  currency: string;
  /** event_time of the payment's latest event: a follow-up never claims to happen before it. */
  lastEventMs: number;
}

/** A well-formed event plus what the stream needs to know about it. */
export interface GeneratedEvent {
  event: PaymentEvent;
  merchant: number;
  /** Clock reading when it was generated (the producer's "now"). */
  nowMs: number;
}

/** A bounded bag of payments with O(1) random take; when full, a random old entry is forgotten. */
class PaymentPool {
  private readonly items: Payment[] = [];
  constructor(private readonly capacity: number) {}
  get size(): number {
    return this.items.length;
  }
  add(p: Payment, rng: Prng): void {
    if (this.items.length < this.capacity) this.items.push(p);
    else this.items[rng.int(0, this.capacity - 1)] = p;
  }
  /** A random payment's index, or -1 if empty. */
  pickIndex(rng: Prng): number {
    return this.items.length === 0 ? -1 : rng.int(0, this.items.length - 1);
  }
  get(i: number): Payment {
    return this.items[i] as Payment;
  }
  remove(i: number): void {
    const last = this.items.pop() as Payment;
    if (i < this.items.length) this.items[i] = last;
  }
}

export class PaymentEventGenerator {
  private readonly rng: Prng;
  private readonly merchantIds: string[];
  private readonly merchantCurrency: string[];
  private readonly customerCountry: string[];
  private readonly merchantPicker: WeightedPicker;
  private readonly typePicker: WeightedPicker;
  private readonly seqs: Float64Array;
  private readonly open: PaymentPool;
  private readonly settled: PaymentPool;
  private eventCounter = 0;
  private paymentCounter = 0;

  constructor(private readonly options: PaymentEventGeneratorOptions) {
    const setup = options.seed.fork("setup");
    this.rng = options.seed.fork("events");
    const merchantWidth = Math.max(4, String(options.merchants).length);
    this.merchantIds = Array.from(
      { length: options.merchants },
      (_, i) => `mer_${String(i + 1).padStart(merchantWidth, "0")}`,
    );
    const currencyPicker = new WeightedPicker(MAIN_CURRENCY_WEIGHTS);
    this.merchantCurrency = this.merchantIds.map(() => MAIN_CURRENCIES[currencyPicker.pick(setup)] as string);
    const countryPicker = new WeightedPicker(CARD_COUNTRY_WEIGHTS);
    this.customerCountry = Array.from(
      { length: options.customers },
      () => CARD_COUNTRIES[countryPicker.pick(setup)] as string,
    );
    // Merchant popularity: weight 1/rank^skew over a shuffled rank order, so the hottest merchant is
    // not always mer_0001.
    const ranks = Array.from({ length: options.merchants }, (_, i) => i + 1);
    for (let i = ranks.length - 1; i > 0; i--) {
      const j = setup.int(0, i);
      [ranks[i], ranks[j]] = [ranks[j] as number, ranks[i] as number];
    }
    this.merchantPicker = new WeightedPicker(ranks.map((r) => 1 / Math.pow(r, options.merchantSkew)));
    this.typePicker = new WeightedPicker(PAYMENT_EVENT_TYPES.map((t) => options.typeWeights[t]));
    this.seqs = new Float64Array(options.merchants);
    this.open = new PaymentPool(options.maxOpenPayments);
    this.settled = new PaymentPool(options.maxOpenPayments);
  }

  get merchantCount(): number {
    return this.merchantIds.length;
  }

  merchantId(index: number): string {
    return this.merchantIds[index] as string;
  }

  /**
   * The next event at clock reading `nowMs`. With `commit: false` the event is built exactly the same
   * way but leaves no trace: the merchant's seq does not advance and no payment is opened or closed.
   * The stream uses that for events it is about to corrupt, so well-formed events keep gapless seqs
   * and every settlement in the well-formed set has its authorization there too.
   */
  next(nowMs: number, commit = true): GeneratedEvent {
    const rng = this.rng;
    const eventNo = ++this.eventCounter;
    let type = PAYMENT_EVENT_TYPES[this.typePicker.pick(rng)] as PaymentEventType;
    const pool = type === "settlement" ? this.open : type === "authorization" ? null : this.settled;
    const parentIndex = pool ? pool.pickIndex(rng) : -1;
    if (pool && parentIndex < 0) type = "authorization"; // nothing to settle/refund yet: start a payment

    let payment: Payment;
    let amountCents: number;
    if (type === "authorization") {
      const merchant = this.merchantPicker.pick(rng);
      // Log-normal amounts: median about 40.00, long tail, clamped to 0.50 .. 5000.00.
      amountCents = Math.min(500_000, Math.max(50, Math.round(Math.exp(Math.log(40) + rng.normal()) * 100)));
      const currency = rng.chance(this.options.otherCurrencyShare)
        ? (rng.pick(OTHER_CURRENCIES) as string)
        : (this.merchantCurrency[merchant] as string);
      const paymentNo = ++this.paymentCounter; // never reused, even by an event that gets corrupted
      payment = {
        paymentId: `pay_${this.options.idPrefix}_${String(paymentNo).padStart(8, "0")}`,
        merchant,
        customer: rng.int(0, this.options.customers - 1),
        amountCents,
        currency,
        lastEventMs: Number.NEGATIVE_INFINITY,
      };
      if (commit) this.open.add(payment, rng);
    } else {
      const from = pool as PaymentPool;
      payment = from.get(parentIndex);
      amountCents = payment.amountCents;
      if (type === "refund" && !rng.chance(0.7)) amountCents = rng.int(1, payment.amountCents); // partial refund
      if (commit) {
        from.remove(parentIndex);
        if (type === "settlement") this.settled.add(payment, rng);
      }
    }

    const merchant = payment.merchant;
    const seq = (this.seqs[merchant] as number) + 1;
    if (commit) this.seqs[merchant] = seq;
    const jitter = this.options.jitterMs > 0 ? rng.int(0, this.options.jitterMs) : 0;
    const eventMs = Math.max(nowMs - jitter, payment.lastEventMs);
    if (commit) payment.lastEventMs = eventMs;
    const event: PaymentEvent = {
      event_id: `evt_${this.options.idPrefix}_${String(eventNo).padStart(8, "0")}`,
      type,
      merchant_id: this.merchantIds[merchant] as string,
      seq,
      payment_id: payment.paymentId,
      customer_id: customerId(payment.customer + 1, this.options.customers),
      amount: formatCents(amountCents),
      currency: payment.currency,
      card_country: this.customerCountry[payment.customer] as string,
      event_time: new Date(eventMs).toISOString(),
    };
    return { event, merchant, nowMs };
  }
}
