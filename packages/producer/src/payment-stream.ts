// The deterministic message stream: well-formed events from the generator, with the adversarial knobs
// applied, reordered within merchants and interleaved with retries. Pure (no Kafka, no timers), so the
// exact same stream can be checked in unit tests, sent to Kafka, or replayed from a seed.
import {
  applyDrift,
  corrupt,
  MALFORMED_KINDS,
  nonPositiveAmount,
  type DriftApplied,
  type MalformedKind,
} from "./adversarial";
import { resolveStreamOptions, type PaymentStreamOptions, type ResolvedStreamOptions } from "./options";
import { PaymentEventGenerator, type PaymentEventType } from "./payment-events";
import { Prng, WeightedPicker } from "./prng";

interface MessageBase {
  /** 0-based index of this message in the stream (the order it is handed to Kafka). */
  position: number;
  /** Kafka key: the merchant_id. */
  key: string;
  /** Kafka value: JSON bytes, or the malformed bytes. */
  value: Buffer;
  /** event_id of the event (for malformed messages: the id it would have had; it may be unreadable). */
  eventId: string;
  /** The clock reading when the event was generated ("now" of the producer), ms since the epoch. */
  producedAtMs: number;
}

/** First sending of a well-formed event (it may still carry drift or a non-positive amount). */
export interface EventMessage extends MessageBase {
  kind: "event";
  /** Event type before any drift (drift may change the payload's fields, not this). */
  type: PaymentEventType;
  /** The merchant's true sequence number (the payload's `seq` may be drifted). */
  seq: number;
  /** The JSON object that `value` encodes. Do not mutate. */
  payload: Readonly<Record<string, unknown>>;
  /** event_time was set lateByMs behind producedAtMs (lateMinMs..lateMaxMs). */
  late: boolean;
  /** producedAtMs - event_time in ms (small jitter for normal events). */
  lateByMs: number;
  /** True if a later event of the same merchant (higher seq) was emitted before this one. */
  outOfOrder: boolean;
  nonPositiveAmount: boolean;
  drift: DriftApplied | null;
}

/** A producer retry: same key and byte-identical value as the original event message. */
export interface DuplicateMessage extends MessageBase {
  kind: "duplicate";
  seq: number;
  /** Position of the original; the retry follows it by `position - originalPosition - 1` messages. */
  originalPosition: number;
}

export interface MalformedMessage extends MessageBase {
  kind: "malformed";
  malformed: MalformedKind;
  /** What exactly is wrong, e.g. "missing amount", "seq: string", "binary". */
  detail: string;
}

export type StreamMessage = EventMessage | DuplicateMessage | MalformedMessage;

interface Held {
  message: EventMessage;
  merchant: number;
  /** How many more later events of its merchant must overtake it before it is released. */
  overtakesLeft: number;
  heldAtPosition: number;
  released: boolean;
}

interface PendingDuplicate {
  due: number;
  original: EventMessage;
}

export class PaymentStream {
  readonly options: ResolvedStreamOptions;
  private readonly generator: PaymentEventGenerator;
  // One PRNG per concern, so e.g. changing duplicateShare does not change which events are late.
  private readonly rngMalformed: Prng;
  private readonly rngLate: Prng;
  private readonly rngAmount: Prng;
  private readonly rngDrift: Prng;
  private readonly rngOrder: Prng;
  private readonly rngDuplicate: Prng;
  private readonly malformedPicker: WeightedPicker;
  private readonly hasDrift: boolean;

  private emitted = 0;
  private generated = 0;
  private readonly maxSeqEmitted: Float64Array;
  /** Released from holding, to go out before anything new; small (a few entries at most). */
  private readonly ready: EventMessage[] = [];
  private readonly heldFifo: Held[] = [];
  private heldHead = 0;
  private heldCount = 0;
  private readonly heldByMerchant = new Map<number, Held[]>();
  private readonly duplicates: PendingDuplicate[] = [];
  private readonly merchantOf = new Map<EventMessage, number>();

  constructor(options: PaymentStreamOptions = {}) {
    this.options = resolveStreamOptions(options);
    const root = Prng.from(this.options.seed);
    const idPrefix = this.options.idPrefix ?? root.fork("id-prefix").hex(8);
    this.generator = new PaymentEventGenerator({ ...this.options, seed: root, idPrefix });
    this.rngMalformed = root.fork("malformed");
    this.rngLate = root.fork("late");
    this.rngAmount = root.fork("amount");
    this.rngDrift = root.fork("drift");
    this.rngOrder = root.fork("order");
    this.rngDuplicate = root.fork("duplicate");
    this.malformedPicker = new WeightedPicker(MALFORMED_KINDS.map((k) => this.options.malformedKinds[k]));
    this.hasDrift =
      Object.keys(this.options.extraFields).length + Object.keys(this.options.typeChanges).length > 0;
    this.maxSeqEmitted = new Float64Array(this.options.merchants);
  }

  /** Messages emitted so far. */
  get position(): number {
    return this.emitted;
  }

  /** Well-formed events generated but not yet emitted (held back to be reordered). */
  get pendingOriginals(): number {
    return this.heldCount + this.ready.length;
  }

  /** Retries scheduled but not yet emitted. */
  get pendingDuplicates(): number {
    return this.duplicates.length;
  }

  /**
   * The next message. `budget` is how many messages the caller will still take, this one included:
   * the stream never holds back more events than fit in it, so a finite run ends with every generated
   * event emitted. Retries still pending at the end are simply never sent (they are not in the manifest).
   */
  next(budget = Number.POSITIVE_INFINITY): StreamMessage | undefined {
    if (budget <= 0) return undefined;
    for (;;) {
      const ready = this.ready.shift();
      if (ready) return this.emitEvent(ready);
      // Invariant: held-back events <= budget. When they fill it, they go out before anything else.
      const oldest = this.oldestHeld();
      if (oldest && this.heldCount >= budget) {
        this.release([oldest]);
        continue; // now in `ready`
      }
      const dup = this.duplicates[0];
      if (dup && dup.due <= this.emitted) {
        this.duplicates.shift();
        return this.emitDuplicate(dup.original);
      }
      if (oldest && this.emitted - oldest.heldAtPosition >= this.options.outOfOrderMaxHold) {
        this.release([oldest]);
        continue;
      }
      const slot = this.generate();
      if (slot.kind === "malformed") return this.emitRaw(slot);
      const o = this.options;
      // Hold only if, within the budget, something can still overtake it and everything held still fits.
      if (o.outOfOrderShare > 0 && this.rngOrder.chance(o.outOfOrderShare) && this.heldCount + 1 < budget) {
        this.hold(slot, this.rngOrder.int(1, o.outOfOrderWindow));
        continue;
      }
      return this.emitEvent(slot);
    }
  }

  /** Exactly `count` messages (fewer only if count <= 0); every event generated among them is emitted. */
  take(count: number): StreamMessage[] {
    const out: StreamMessage[] = [];
    for (let i = 0; i < count; i++) out.push(this.next(count - i) as StreamMessage);
    return out;
  }

  /** Emit every event still held back for reordering, e.g. before stopping. Pending retries are dropped. */
  drain(): StreamMessage[] {
    const out: StreamMessage[] = [];
    for (let held = this.oldestHeld(); held; held = this.oldestHeld()) {
      this.ready.push(held.message);
      this.unhold(held);
    }
    for (let m = this.ready.shift(); m; m = this.ready.shift()) out.push(this.emitEvent(m));
    this.duplicates.length = 0;
    return out;
  }

  // ---- generation -------------------------------------------------------------------------------

  private generate(): EventMessage | Omit<MalformedMessage, "position"> {
    const o = this.options;
    const nowMs = o.clock.now();
    const index = this.generated++;
    const malformed = o.malformedShare > 0 && this.rngMalformed.chance(o.malformedShare);
    const { event, merchant } = this.generator.next(nowMs, !malformed);
    if (malformed) {
      const kind = MALFORMED_KINDS[this.malformedPicker.pick(this.rngMalformed)] as MalformedKind;
      const c = corrupt(event, kind, this.rngMalformed);
      return {
        kind: "malformed",
        key: event.merchant_id,
        value: c.value,
        eventId: event.event_id,
        producedAtMs: nowMs,
        malformed: c.kind,
        detail: c.detail,
      };
    }
    const payload: Record<string, unknown> = { ...event };
    let lateByMs = nowMs - Date.parse(event.event_time);
    const late = o.lateShare > 0 && this.rngLate.chance(o.lateShare);
    if (late) {
      lateByMs = this.rngLate.int(o.lateMinMs, o.lateMaxMs);
      payload.event_time = new Date(nowMs - lateByMs).toISOString();
    }
    const nonPositive = o.nonPositiveAmountShare > 0 && this.rngAmount.chance(o.nonPositiveAmountShare);
    if (nonPositive) payload.amount = nonPositiveAmount(event.amount, this.rngAmount);
    let drift: DriftApplied | null = null;
    if (this.hasDrift && index >= o.driftStartAt && this.rngDrift.chance(o.driftShare)) {
      drift = applyDrift(
        payload,
        { ...event, ...payload } as typeof event,
        o.extraFields,
        o.typeChanges,
        this.rngDrift,
      );
    }
    const message: EventMessage = {
      kind: "event",
      position: -1,
      key: event.merchant_id,
      value: Buffer.from(JSON.stringify(payload)),
      eventId: event.event_id,
      producedAtMs: nowMs,
      type: event.type,
      seq: event.seq,
      payload,
      late,
      lateByMs,
      outOfOrder: false,
      nonPositiveAmount: nonPositive,
      drift,
    };
    this.merchantOf.set(message, merchant);
    return message;
  }

  // ---- emission -----------------------------------------------------------------------------------

  private emitRaw(m: Omit<MalformedMessage, "position">): MalformedMessage {
    return { ...m, position: this.emitted++ };
  }

  private emitEvent(m: EventMessage): EventMessage {
    const merchant = this.merchantOf.get(m) as number;
    this.merchantOf.delete(m);
    m.position = this.emitted++;
    if (m.seq < (this.maxSeqEmitted[merchant] as number)) m.outOfOrder = true;
    else this.maxSeqEmitted[merchant] = m.seq;
    // This event overtakes the held-back events of its merchant with a lower seq.
    const held = this.heldByMerchant.get(merchant);
    if (held) {
      const due = held.filter((h) => h.message.seq < m.seq && --h.overtakesLeft <= 0);
      if (due.length > 0) this.release(due);
    }
    const o = this.options;
    if (o.duplicateShare > 0 && this.rngDuplicate.chance(o.duplicateShare)) {
      const delay = this.rngDuplicate.chance(o.duplicateImmediateShare)
        ? 0
        : this.rngDuplicate.int(1, o.duplicateMaxDelay);
      this.scheduleDuplicate({ due: this.emitted + delay, original: m });
    }
    return m;
  }

  private emitDuplicate(original: EventMessage): DuplicateMessage {
    return {
      kind: "duplicate",
      position: this.emitted++,
      key: original.key,
      value: original.value,
      eventId: original.eventId,
      producedAtMs: original.producedAtMs,
      seq: original.seq,
      originalPosition: original.position,
    };
  }

  /** Keep `duplicates` sorted by due position (stable for equal dues). */
  private scheduleDuplicate(d: PendingDuplicate): void {
    let lo = 0;
    let hi = this.duplicates.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.duplicates[mid] as PendingDuplicate).due <= d.due) lo = mid + 1;
      else hi = mid;
    }
    this.duplicates.splice(lo, 0, d);
  }

  // ---- out-of-order holding ---------------------------------------------------------------------

  private hold(message: EventMessage, overtakes: number): void {
    const merchant = this.merchantOf.get(message) as number;
    const h: Held = {
      message,
      merchant,
      overtakesLeft: overtakes,
      heldAtPosition: this.emitted,
      released: false,
    };
    this.heldFifo.push(h);
    this.heldCount++;
    const list = this.heldByMerchant.get(merchant);
    if (list) list.push(h);
    else this.heldByMerchant.set(merchant, [h]);
  }

  private oldestHeld(): Held | undefined {
    while (this.heldHead < this.heldFifo.length && (this.heldFifo[this.heldHead] as Held).released)
      this.heldHead++;
    if (this.heldHead > 1024 && this.heldHead * 2 > this.heldFifo.length) {
      this.heldFifo.splice(0, this.heldHead);
      this.heldHead = 0;
    }
    return this.heldFifo[this.heldHead];
  }

  /**
   * Move held events to the front of `ready`, lowest seq first, so they go out next: nothing else
   * overtakes them after their count ran out, and they do not overtake each other.
   */
  private release(entries: Held[]): void {
    for (const h of entries) this.unhold(h);
    const messages = entries.map((h) => h.message).sort((a, b) => a.seq - b.seq);
    this.ready.unshift(...messages);
  }

  private unhold(h: Held): void {
    h.released = true;
    this.heldCount--;
    const list = this.heldByMerchant.get(h.merchant) as Held[];
    list.splice(list.indexOf(h), 1);
    if (list.length === 0) this.heldByMerchant.delete(h.merchant);
  }
}
