// What was actually sent (acknowledged by Kafka), so a test can compute the exact expected sink rows:
// every distinct well-formed event once, which were re-sent, late, out of order, drifted, and every
// malformed message with its kind. For large runs, keep only counts and the id set (or only counts).
import { MALFORMED_KINDS, type DriftApplied, type MalformedKind } from "./adversarial";
import { PAYMENT_EVENT_TYPES, type PaymentEventType } from "./payment-events";
import type { StreamMessage } from "./payment-stream";

/** `full`: every event and malformed message; `ids`: counts + event id set; `counts`: counts only. */
export type ManifestDetail = "full" | "ids" | "counts";

export interface ManifestCounts {
  /** Every message sent: events + duplicates + malformed. */
  messages: number;
  /** Distinct well-formed events (first sendings; includes drifted and non-positive ones). */
  events: number;
  /** Re-sent copies (messages beyond the first for an event_id; an event is re-sent at most once). */
  duplicates: number;
  malformed: number;
  /** Distinct events that are late / out of order / drifted / have a non-positive amount. */
  late: number;
  outOfOrder: number;
  drifted: number;
  nonPositiveAmount: number;
  byType: Record<PaymentEventType, number>;
  malformedByKind: Record<MalformedKind, number>;
}

export interface ManifestEvent {
  eventId: string;
  /** Kafka key (merchant_id). */
  key: string;
  type: PaymentEventType;
  seq: number;
  /** Position of the first sending in the stream. */
  position: number;
  /** The JSON object sent (after drift). */
  payload: Readonly<Record<string, unknown>>;
  /** Times sent: 1 + duplicates. */
  copies: number;
  late: boolean;
  lateByMs: number;
  outOfOrder: boolean;
  nonPositiveAmount: boolean;
  drift: DriftApplied | null;
  producedAtMs: number;
}

export interface ManifestMalformed {
  /** The id the event would have had; may be absent or unreadable in the payload. */
  eventId: string;
  key: string;
  position: number;
  kind: MalformedKind;
  detail: string;
  value: Buffer;
}

export interface Manifest {
  detail: ManifestDetail;
  counts: ManifestCounts;
  /** Distinct well-formed event ids (null in `counts` mode). Live view: do not mutate. */
  eventIds: ReadonlySet<string> | null;
  /** By event id, in first-sent order (`full` mode only). Live view: do not mutate. */
  events: ReadonlyMap<string, ManifestEvent> | null;
  /** In sent order (`full` mode only). */
  malformed: readonly ManifestMalformed[] | null;
}

function zeroCounts(): ManifestCounts {
  return {
    messages: 0,
    events: 0,
    duplicates: 0,
    malformed: 0,
    late: 0,
    outOfOrder: 0,
    drifted: 0,
    nonPositiveAmount: 0,
    byType: Object.fromEntries(PAYMENT_EVENT_TYPES.map((t) => [t, 0])) as Record<PaymentEventType, number>,
    malformedByKind: Object.fromEntries(MALFORMED_KINDS.map((k) => [k, 0])) as Record<MalformedKind, number>,
  };
}

export class ManifestBuilder {
  private readonly counts = zeroCounts();
  private readonly ids: Set<string> | null;
  private readonly events: Map<string, ManifestEvent> | null;
  private readonly malformed: ManifestMalformed[] | null;

  constructor(readonly detail: ManifestDetail = "full") {
    this.ids = detail === "counts" ? null : new Set();
    this.events = detail === "full" ? new Map() : null;
    this.malformed = detail === "full" ? [] : null;
  }

  /** Record a message Kafka acknowledged. */
  record(m: StreamMessage): void {
    const c = this.counts;
    c.messages++;
    switch (m.kind) {
      case "event":
        c.events++;
        c.byType[m.type]++;
        if (m.late) c.late++;
        if (m.outOfOrder) c.outOfOrder++;
        if (m.drift) c.drifted++;
        if (m.nonPositiveAmount) c.nonPositiveAmount++;
        this.ids?.add(m.eventId);
        this.events?.set(m.eventId, {
          eventId: m.eventId,
          key: m.key,
          type: m.type,
          seq: m.seq,
          position: m.position,
          payload: m.payload,
          copies: 1,
          late: m.late,
          lateByMs: m.lateByMs,
          outOfOrder: m.outOfOrder,
          nonPositiveAmount: m.nonPositiveAmount,
          drift: m.drift,
          producedAtMs: m.producedAtMs,
        });
        break;
      case "duplicate": {
        c.duplicates++;
        const e = this.events?.get(m.eventId);
        if (e) e.copies++;
        break;
      }
      case "malformed":
        c.malformed++;
        c.malformedByKind[m.malformed]++;
        this.malformed?.push({
          eventId: m.eventId,
          key: m.key,
          position: m.position,
          kind: m.malformed,
          detail: m.detail,
          value: m.value,
        });
        break;
    }
  }

  /** The manifest so far. Sets and maps are live views, cheap to take repeatedly. */
  manifest(): Manifest {
    return {
      detail: this.detail,
      counts: structuredClone(this.counts),
      eventIds: this.ids,
      events: this.events,
      malformed: this.malformed,
    };
  }
}

/** A plain JSON-serialisable form (malformed bytes as base64), e.g. to write next to a benchmark. */
export function manifestToJSON(m: Manifest): Record<string, unknown> {
  return {
    detail: m.detail,
    counts: m.counts,
    eventIds: m.eventIds ? [...m.eventIds] : null,
    events: m.events ? [...m.events.values()] : null,
    malformed: m.malformed
      ? m.malformed.map(({ value, ...rest }) => ({ ...rest, valueBase64: value.toString("base64") }))
      : null,
  };
}
