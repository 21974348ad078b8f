// PaymentProducer without a broker: option checks, and stopping promptly while Kafka is unreachable.
import { describe, expect, it } from "vitest";
import { OptionsError } from "./options";
import { formatProgress, PaymentProducer } from "./payment-producer";

// Port 9 (discard) refuses connections: kafkajs keeps retrying, as during a broker restart.
const unreachable = {
  brokers: ["127.0.0.1:9"],
  topic: "never_created",
  stopGraceMs: 300,
  log: () => undefined,
  kafkaLog: () => undefined,
};

describe("PaymentProducer", { timeout: 30_000 }, () => {
  it("rejects bad options before touching Kafka", () => {
    expect(() => new PaymentProducer({ ...unreachable, topic: "no spaces" })).toThrow(OptionsError);
    expect(() => new PaymentProducer({ ...unreachable, batchSize: 0 })).toThrow(/batchSize/);
    expect(() => new PaymentProducer({ ...unreachable, duplicateShare: 2 })).toThrow(/duplicateShare/);
  });

  it.each(["run", "produce"] as const)(
    "%s() stops within the grace period when Kafka is unreachable",
    async (mode) => {
      const producer = new PaymentProducer(unreachable);
      const stop = new AbortController();
      setTimeout(() => stop.abort(), 200);
      const started = performance.now();
      const result =
        mode === "run"
          ? await producer.run({ ratePerSecond: 100, signal: stop.signal, progressIntervalMs: 0 })
          : await producer.produce({ count: 1000, signal: stop.signal });
      expect(performance.now() - started).toBeLessThan(5000);
      expect(result).toMatchObject({ aborted: true, sent: 0 });
      expect(result.manifest.counts.messages).toBe(0);
      await producer.disconnect();
    },
  );

  it("ensureTopic gives up after the grace period once stopped", async () => {
    const producer = new PaymentProducer(unreachable);
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 100);
    await expect(producer.ensureTopic(6, stop.signal)).rejects.toThrow(/within 300 ms/);
  });
});

describe("formatProgress", () => {
  it("is one line with the counts and the rate", () => {
    const line = formatProgress({
      sent: 10,
      events: 8,
      duplicates: 1,
      late: 2,
      outOfOrder: 3,
      malformed: 1,
      elapsedMs: 1000,
      ratePerSecond: 9.96,
    });
    expect(line).toBe("sent=10 events=8 dupes=1 late=2 out-of-order=3 malformed=1 rate=10.0/s");
  });
});
