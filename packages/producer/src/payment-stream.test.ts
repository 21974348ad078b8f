import { describe, expect, it, vi } from "vitest";
import { simulatedClock } from "./clock";
import { decodePaymentEvent, validatePaymentEvent } from "./payment-events";
import { OptionsError } from "./options";
import {
  PaymentStream,
  type DuplicateMessage,
  type EventMessage,
  type MalformedMessage,
  type StreamMessage,
} from "./payment-stream";

// Tens of thousands of generated events per test: fast alone, slower on a busy shared machine.
vi.setConfig({ testTimeout: 30_000 });

const ADVERSARIAL = { duplicateShare: 0.05, lateShare: 0.02, outOfOrderShare: 0.05, malformedShare: 0.01 };

const events = (ms: StreamMessage[]) => ms.filter((m): m is EventMessage => m.kind === "event");
const dupes = (ms: StreamMessage[]) => ms.filter((m): m is DuplicateMessage => m.kind === "duplicate");
const malformed = (ms: StreamMessage[]) => ms.filter((m): m is MalformedMessage => m.kind === "malformed");
const bytes = (ms: StreamMessage[]) => ms.map((m) => `${m.key}|${m.value.toString("base64")}`);

/** Assert `actual` is within `tolerance` (relative) of `expected`. */
function expectNear(actual: number, expected: number, tolerance: number) {
  expect(actual).toBeGreaterThanOrEqual(expected * (1 - tolerance));
  expect(actual).toBeLessThanOrEqual(expected * (1 + tolerance));
}

describe("determinism", () => {
  it("same seed and options give a byte-identical stream", () => {
    const a = new PaymentStream({ seed: 42, ...ADVERSARIAL }).take(5000);
    const b = new PaymentStream({ seed: 42, ...ADVERSARIAL }).take(5000);
    expect(bytes(b)).toEqual(bytes(a));
    expect(b.map((m) => m.kind)).toEqual(a.map((m) => m.kind));
  });

  it("is pinned: seed 42 starts with exactly these bytes (docs/producer.md shows the second)", () => {
    // Changing this is a breaking change for anyone replaying a seed (benchmarks, saved test cases).
    const [first, second] = new PaymentStream({ seed: 42 }).take(2);
    expect(first!.value.toString()).toBe(
      '{"event_id":"evt_ef41eb5b_00000001","type":"authorization","merchant_id":"mer_0110","seq":1,"payment_id":"pay_ef41eb5b_00000001","customer_id":"cus_005760","amount":"27.55","currency":"USD","card_country":"US","event_time":"2024-12-31T23:59:59.945Z"}',
    );
    expect(second!.value.toString()).toBe(
      '{"event_id":"evt_ef41eb5b_00000002","type":"settlement","merchant_id":"mer_0110","seq":2,"payment_id":"pay_ef41eb5b_00000001","customer_id":"cus_005760","amount":"27.55","currency":"USD","card_country":"US","event_time":"2024-12-31T23:59:59.945Z"}',
    );
  });

  it("a different seed gives a different stream and different ids", () => {
    const a = new PaymentStream({ seed: 42, ...ADVERSARIAL }).take(2000);
    const b = new PaymentStream({ seed: 43, ...ADVERSARIAL }).take(2000);
    const same = a.filter((m, i) => m.value.equals(b[i]!.value)).length;
    expect(same).toBe(0);
    const idsA = new Set(a.map((m) => m.eventId));
    expect(b.some((m) => idsA.has(m.eventId))).toBe(false);
  });

  it("event ids are unique and stable per seed", () => {
    const ms = new PaymentStream({ seed: "ids", malformedShare: 0.05 }).take(10_000);
    const firstSendings = ms.filter((m) => m.kind !== "duplicate").map((m) => m.eventId);
    expect(new Set(firstSendings).size).toBe(firstSendings.length);
    expect(new PaymentStream({ seed: "ids", malformedShare: 0.05 }).take(3)[0]!.eventId).toBe(ms[0]!.eventId);
    expect(ms[0]!.eventId).toMatch(/^evt_[0-9a-f]{8}_\d{8}$/);
  });

  it("turning on duplicates does not change the events themselves", () => {
    const plain = events(new PaymentStream({ seed: 5 }).take(3000));
    const withDupes = events(new PaymentStream({ seed: 5, duplicateShare: 0.3 }).take(4000)).slice(
      0,
      plain.length,
    );
    expect(bytes(withDupes)).toEqual(bytes(plain));
  });

  it("with a simulated clock, event times follow the clock", () => {
    const ms = events(
      new PaymentStream({
        seed: 1,
        jitterMs: 0,
        clock: simulatedClock({ start: "2030-05-01T12:00:00Z", stepMs: 1000 }),
      }).take(3),
    );
    expect(ms.map((m) => m.payload.event_time)).toEqual([
      "2030-05-01T12:00:00.000Z",
      "2030-05-01T12:00:01.000Z",
      "2030-05-01T12:00:02.000Z",
    ]);
  });
});

describe("well-formed events", () => {
  const ms = new PaymentStream({ seed: 11, merchants: 50 }).take(10_000);

  it("all validate against the schema, with two-decimal string amounts", () => {
    for (const m of ms) {
      const r = decodePaymentEvent(m.value);
      expect(r.ok, m.value.toString()).toBe(true);
      if (r.ok) {
        expect(r.event.amount).toMatch(/^\d+\.\d{2}$/);
        expect(Number(r.event.amount)).toBeGreaterThan(0);
        expect(r.event.merchant_id).toBe(m.key);
        expect(r.extraFields).toEqual([]);
      }
    }
  });

  it("use all four types, a few hundred merchants' worth of keys, mostly USD/EUR/GBP", () => {
    const evs = events(ms);
    const types = new Set(evs.map((e) => e.type));
    expect([...types].sort()).toEqual(["authorization", "dispute", "refund", "settlement"]);
    expect(new Set(evs.map((e) => e.key)).size).toBe(50);
    const main = evs.filter((e) => ["USD", "EUR", "GBP"].includes(e.payload.currency as string)).length;
    expectNear(main / evs.length, 0.97, 0.02);
  });

  it("each merchant's seq runs 1..n without gaps, in order when nothing is reordered", () => {
    const byMerchant = new Map<string, number[]>();
    for (const e of events(ms)) byMerchant.set(e.key, [...(byMerchant.get(e.key) ?? []), e.seq]);
    for (const seqs of byMerchant.values()) expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });

  it("settlements, refunds and disputes follow an authorization of the same payment", () => {
    const auths = new Map<string, EventMessage>();
    for (const e of events(ms)) {
      const p = e.payload;
      if (e.type === "authorization") {
        auths.set(p.payment_id as string, e);
        continue;
      }
      const auth = auths.get(p.payment_id as string);
      expect(auth, `${e.eventId} ${String(p.payment_id)}`).toBeDefined();
      expect(p.merchant_id).toBe(auth!.payload.merchant_id);
      expect(p.currency).toBe(auth!.payload.currency);
      expect(Date.parse(p.event_time as string)).toBeGreaterThanOrEqual(
        Date.parse(auth!.payload.event_time as string),
      );
      if (e.type === "refund") expect(Number(p.amount)).toBeLessThanOrEqual(Number(auth!.payload.amount));
      else expect(p.amount).toBe(auth!.payload.amount);
    }
  });
});

describe("adversarial shares over 10k messages", () => {
  for (const seed of [1, 2, 3]) {
    it(`are roughly honoured (seed ${seed})`, () => {
      const ms = new PaymentStream({ seed, ...ADVERSARIAL, nonPositiveAmountShare: 0.03 }).take(10_000);
      const evs = events(ms);
      expect(ms).toHaveLength(10_000);
      expectNear(malformed(ms).length / (evs.length + malformed(ms).length), 0.01, 0.3);
      expectNear(dupes(ms).length / evs.length, 0.05, 0.2);
      expectNear(evs.filter((e) => e.late).length / evs.length, 0.02, 0.3);
      expectNear(evs.filter((e) => e.outOfOrder).length / evs.length, 0.05, 0.2);
      expectNear(evs.filter((e) => e.nonPositiveAmount).length / evs.length, 0.03, 0.25);
    });
  }

  it("are exactly zero when off", () => {
    const ms = new PaymentStream({ seed: 1 }).take(10_000);
    expect(
      ms.every((m) => m.kind === "event" && !m.late && !m.outOfOrder && !m.nonPositiveAmount && !m.drift),
    ).toBe(true);
  });

  it("reject shares outside [0, 1] and other bad options", () => {
    expect(() => new PaymentStream({ duplicateShare: 1.5 })).toThrow(OptionsError);
    expect(() => new PaymentStream({ lateShare: -0.1 })).toThrow(/lateShare/);
    expect(() => new PaymentStream({ merchants: 0 })).toThrow(/merchants/);
    expect(() => new PaymentStream({ lateMinMs: 10_000, lateMaxMs: 5_000 })).toThrow(/lateMaxMs/);
    expect(() => new PaymentStream({ typeChanges: { merchant_id: "number" } })).toThrow(/merchant_id/);
    expect(() => new PaymentStream({ extraFields: { amount: 1 } })).toThrow(/already/);
  });
});

describe("out of order", () => {
  const window = 4;
  const ms = new PaymentStream({
    seed: 21,
    merchants: 40,
    outOfOrderShare: 0.2,
    outOfOrderWindow: window,
  }).take(10_000);
  const evs = events(ms);

  it("really reorders within a merchant, and the flags say exactly which", () => {
    const maxSeen = new Map<string, number>();
    let inversions = 0;
    for (const e of evs) {
      const max = maxSeen.get(e.key) ?? 0;
      const inverted = e.seq < max;
      expect(e.outOfOrder).toBe(inverted);
      if (inverted) inversions++;
      else maxSeen.set(e.key, e.seq);
    }
    expectNear(inversions / evs.length, 0.2, 0.15);
  });

  it("within the window: an event is overtaken by at most `window` later events of its merchant", () => {
    const emitted = new Map<string, number[]>();
    for (const e of evs) {
      const before = emitted.get(e.key) ?? [];
      const overtakers = before.filter((s) => s > e.seq).length;
      expect(overtakers).toBeLessThanOrEqual(window);
      if (e.outOfOrder) expect(overtakers).toBeGreaterThanOrEqual(1);
      before.push(e.seq);
      emitted.set(e.key, before);
    }
  });

  it("still emits every event exactly once (per-merchant seqs form 1..n)", () => {
    const seqs = new Map<string, number[]>();
    for (const e of evs) seqs.set(e.key, [...(seqs.get(e.key) ?? []), e.seq]);
    for (const list of seqs.values())
      expect([...list].sort((a, b) => a - b)).toEqual(list.map((_, i) => i + 1));
  });

  it("take(n) returns exactly n messages and leaves nothing held back, even for tiny n", () => {
    for (const n of [1, 2, 3, 10, 97]) {
      const s = new PaymentStream({ seed: n, merchants: 3, outOfOrderShare: 0.9, duplicateShare: 0.5 });
      expect(s.take(n)).toHaveLength(n);
      expect(s.pendingOriginals).toBe(0);
    }
  });

  it("drain() emits what a continuous run still holds", () => {
    const s = new PaymentStream({ seed: 8, merchants: 200, outOfOrderShare: 0.5 });
    for (let i = 0; i < 500; i++) s.next();
    const held = s.pendingOriginals;
    expect(held).toBeGreaterThan(0);
    expect(s.drain()).toHaveLength(held);
    expect(s.pendingOriginals).toBe(0);
  });
});

describe("duplicates", () => {
  const ms = new PaymentStream({ seed: 31, duplicateShare: 0.1, duplicateMaxDelay: 50, lateShare: 0.1 }).take(
    10_000,
  );

  it("repeat the key, event_id and exact bytes of an earlier original", () => {
    const originals = new Map(events(ms).map((e) => [e.eventId, e]));
    for (const d of dupes(ms)) {
      const o = originals.get(d.eventId);
      expect(o).toBeDefined();
      expect(d.value.equals(o!.value)).toBe(true);
      expect(d.key).toBe(o!.key);
      expect(d.originalPosition).toBe(o!.position);
      expect(d.position).toBeGreaterThan(o!.position);
    }
  });

  it("come sometimes immediately and sometimes a bit later", () => {
    const gaps = dupes(ms).map((d) => d.position - d.originalPosition);
    expect(gaps.filter((g) => g === 1).length).toBeGreaterThan(gaps.length * 0.3);
    expect(gaps.filter((g) => g > 1).length).toBeGreaterThan(gaps.length * 0.3);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(50 + 10);
  });
});

describe("late events", () => {
  const lateMinMs = 5 * 60_000;
  const lateMaxMs = 2 * 3_600_000;
  const ms = events(
    new PaymentStream({ seed: 41, lateShare: 0.2, lateMinMs, lateMaxMs, jitterMs: 100 }).take(10_000),
  );

  it("have event_time behind the clock by lateMinMs..lateMaxMs; others only by the jitter", () => {
    for (const e of ms) {
      const behind = e.producedAtMs - Date.parse(e.payload.event_time as string);
      expect(behind).toBe(e.lateByMs);
      if (e.late) {
        expect(behind).toBeGreaterThanOrEqual(lateMinMs);
        expect(behind).toBeLessThanOrEqual(lateMaxMs);
      } else {
        expect(behind).toBeGreaterThanOrEqual(0);
        expect(behind).toBeLessThanOrEqual(100);
      }
    }
  });

  it("spread over the range", () => {
    const late = ms.filter((e) => e.late).map((e) => e.lateByMs);
    expect(Math.min(...late)).toBeLessThan(lateMinMs + (lateMaxMs - lateMinMs) * 0.1);
    expect(Math.max(...late)).toBeGreaterThan(lateMaxMs - (lateMaxMs - lateMinMs) * 0.1);
  });
});

describe("malformed messages", () => {
  const ms = malformed(new PaymentStream({ seed: 51, malformedShare: 0.2 }).take(10_000));

  it("come in every kind, in roughly equal shares", () => {
    for (const kind of ["not-json", "truncated-json", "missing-field", "wrong-type"] as const) {
      expectNear(ms.filter((m) => m.malformed === kind).length / ms.length, 0.25, 0.2);
    }
  });

  it("really fail to parse or validate, as their label says", () => {
    for (const m of ms) {
      expect(decodePaymentEvent(m.value).ok).toBe(false);
      let parsed: unknown;
      let parses = true;
      try {
        parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(m.value));
      } catch {
        parses = false;
      }
      if (m.malformed === "not-json" || m.malformed === "truncated-json") {
        expect(parses, m.value.toString()).toBe(false);
        continue;
      }
      expect(parses).toBe(true);
      const r = validatePaymentEvent(parsed);
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      const field =
        m.malformed === "missing-field" ? m.detail.replace("missing ", "") : m.detail.split(":")[0]!;
      expect(r.errors).toHaveLength(1);
      expect(r.errors[0]).toContain(field);
      if (m.malformed === "missing-field") {
        expect(r.errors[0]).toMatch(/missing/);
        expect(parsed).not.toHaveProperty(field);
      } else {
        expect(r.errors[0]).not.toMatch(/missing/);
      }
    }
  });

  it("do not take a seq, so well-formed events stay gapless", () => {
    const evs = events(new PaymentStream({ seed: 51, malformedShare: 0.2 }).take(10_000));
    const seqs = new Map<string, number[]>();
    for (const e of evs) seqs.set(e.key, [...(seqs.get(e.key) ?? []), e.seq]);
    for (const list of seqs.values()) expect(list).toEqual(list.map((_, i) => i + 1));
  });
});

describe("schema drift", () => {
  it("adds extra fields from a given event index on, for a share of events", () => {
    const ms = events(
      new PaymentStream({
        seed: 61,
        extraFields: { campaign: "spring-sale", channel: (e) => (e.type === "refund" ? "support" : "web") },
        driftShare: 0.5,
        driftStartAt: 1000,
      }).take(5000),
    );
    const drifted = ms.filter((e) => e.drift);
    expect(ms.slice(0, 1000).some((e) => e.drift)).toBe(false);
    expectNear(drifted.length / (ms.length - 1000), 0.5, 0.1);
    for (const e of drifted) {
      expect(e.payload.campaign).toBe("spring-sale");
      expect(e.payload.channel).toBe(e.type === "refund" ? "support" : "web");
      const r = decodePaymentEvent(e.value);
      expect(r.ok && r.extraFields).toEqual(["campaign", "channel"]);
    }
  });

  it("changes field types: amount to a non-numeric string, seq to a string, event_time to epoch ms", () => {
    const ms = events(
      new PaymentStream({
        seed: 62,
        typeChanges: { amount: "non-numeric-string", seq: "string", event_time: "number" },
      }).take(200),
    );
    for (const e of ms) {
      const p = JSON.parse(e.value.toString()) as Record<string, unknown>;
      expect(typeof p.amount).toBe("string");
      expect(Number.isNaN(Number(p.amount))).toBe(true);
      expect(p.amount).toMatch(/^[A-Z]{3} \d+\.\d{2}$/);
      expect(p.seq).toBe(String(e.seq));
      expect(p.event_time).toBe(e.producedAtMs - e.lateByMs);
      expect(e.drift?.typeChanges).toEqual(["amount", "seq", "event_time"]);
      expect(decodePaymentEvent(e.value).ok).toBe(false);
    }
  });
});
