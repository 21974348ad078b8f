import { describe, expect, it, vi } from "vitest";
import { ManifestBuilder, manifestToJSON } from "./manifest";
import { PaymentStream } from "./payment-stream";

// Tens of thousands of generated events per test: fast alone, slower on a busy shared machine.
vi.setConfig({ testTimeout: 30_000 });

const OPTIONS = {
  seed: 99,
  duplicateShare: 0.1,
  lateShare: 0.05,
  outOfOrderShare: 0.1,
  malformedShare: 0.05,
  extraFields: { campaign: "x" },
  driftShare: 0.2,
};

function build(detail: "full" | "ids" | "counts", n = 5000) {
  const messages = new PaymentStream(OPTIONS).take(n);
  const b = new ManifestBuilder(detail);
  for (const m of messages) b.record(m);
  return { messages, manifest: b.manifest() };
}

describe("manifest", () => {
  it("accounts for every message: events + duplicates + malformed", () => {
    const { messages, manifest } = build("full");
    const c = manifest.counts;
    expect(c.messages).toBe(messages.length);
    expect(c.events + c.duplicates + c.malformed).toBe(c.messages);
    expect(Object.values(c.byType).reduce((a, b) => a + b, 0)).toBe(c.events);
    expect(Object.values(c.malformedByKind).reduce((a, b) => a + b, 0)).toBe(c.malformed);
    for (const k of ["duplicates", "late", "outOfOrder", "malformed", "drifted"] as const)
      expect(c[k]).toBeGreaterThan(0);
  });

  it("full mode: each well-formed event once, with copies, flags and payload; malformed with kind", () => {
    const { messages, manifest } = build("full");
    const events = manifest.events!;
    expect(events.size).toBe(manifest.counts.events);
    expect([...events.keys()]).toEqual([...manifest.eventIds!]);
    const sentCopies = new Map<string, number>();
    for (const m of messages)
      if (m.kind !== "malformed") sentCopies.set(m.eventId, (sentCopies.get(m.eventId) ?? 0) + 1);
    for (const [id, e] of events) {
      expect(e.copies).toBe(sentCopies.get(id));
      expect(e.payload.event_id).toBe(id);
      expect(e.key).toBe(e.payload.merchant_id);
    }
    expect([...events.values()].filter((e) => e.late).length).toBe(manifest.counts.late);
    expect([...events.values()].filter((e) => e.copies > 1).length).toBe(manifest.counts.duplicates);
    expect(manifest.malformed).toHaveLength(manifest.counts.malformed);
    const ids = new Set(manifest.eventIds);
    for (const m of manifest.malformed!) expect(ids.has(m.eventId)).toBe(false);
  });

  it("ids mode keeps counts and the id set only; counts mode only counts", () => {
    const full = build("full").manifest;
    const ids = build("ids").manifest;
    expect(ids.counts).toEqual(full.counts);
    expect([...ids.eventIds!]).toEqual([...full.eventIds!]);
    expect(ids.events).toBeNull();
    expect(ids.malformed).toBeNull();
    const counts = build("counts").manifest;
    expect(counts.counts).toEqual(full.counts);
    expect(counts.eventIds).toBeNull();
  });

  it("serialises to JSON with malformed bytes in base64", () => {
    const { manifest } = build("full", 500);
    const json = JSON.parse(JSON.stringify(manifestToJSON(manifest))) as {
      eventIds: string[];
      events: unknown[];
      malformed: { valueBase64: string }[];
    };
    expect(json.eventIds).toHaveLength(manifest.counts.events);
    expect(json.events).toHaveLength(manifest.counts.events);
    expect(Buffer.from(json.malformed[0]!.valueBase64, "base64").equals(manifest.malformed![0]!.value)).toBe(
      true,
    );
  });
});
