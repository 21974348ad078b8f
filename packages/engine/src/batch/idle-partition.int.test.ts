// The watermark follows the slowest *active* partition (product.md semantics 4): on real Kafka, a
// partition that stops sending holds the watermark back until it has read nothing for idleTimeout
// (the runner's clock, injected here), then stops counting; the progress record shows it idle. A row
// that arrives later on that partition behind the watermark is late — counted, never silent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelineRunner } from "../runner/pipeline-runner";
import type { BatchProgress } from "../runner/progress";
import { registerPipelineVersion } from "../store/register-version";
import { createEngineFixture, ledgerSpec, type EngineFixture } from "../testing/engine-fixture";

let fx: EngineFixture;
beforeAll(async () => {
  fx = await createEngineFixture("idle");
  const admin = fx.kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: fx.topic, numPartitions: 2 }] });
  await admin.disconnect();
});
afterAll(() => fx?.close());

let n = 0;
async function send(partition: number, eventTimes: string[]) {
  const producer = fx.kafka.producer();
  await producer.connect();
  await producer.send({
    topic: fx.topic,
    messages: eventTimes.map((t) => ({
      partition,
      value: JSON.stringify({ event_id: `evt_${++n}`, type: "settlement", merchant_id: `mer_${partition}`, customer_id: "c", payment_id: "p", seq: n, amount: "1.00", currency: "EUR", card_country: "FR", event_time: `2025-06-01T${t}Z` }),
    })),
  });
  await producer.disconnect();
}

describe("per-partition watermark", () => {
  it("an idle partition stops holding the watermark back after idleTimeout; its later rows behind it are late", async () => {
    let clock = Date.parse("2026-01-01T12:00:00Z");
    const spec = ledgerSpec(fx.topic, { eventTime: { column: "event_time", watermarkDelay: "1m", idleTimeout: "30s" }, expectations: [] });
    const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
    const runner = await PipelineRunner.open({ ...fx.resources, now: () => new Date(clock) }, { pipelineVersionId, spec, owner: "test" });
    const batch = async (): Promise<BatchProgress> => {
      const r = await runner.runBatch();
      if (r.kind !== "committed") throw new Error("expected a batch");
      return r.progress;
    };
    try {
      await send(0, ["10:00:00", "10:10:00"]);
      await send(1, ["10:00:00", "10:02:00"]);
      expect((await batch()).watermark).toBe("2025-06-01T10:01:00.000Z"); // min(10:10, 10:02) − 1m

      clock += 10_000;
      await send(0, ["10:20:00"]);
      expect((await batch()).watermark).toBe("2025-06-01T10:01:00.000Z"); // partition 1 still active

      clock += 50_000; // partition 1 has read nothing for 60 s > idleTimeout
      await send(0, ["10:30:00"]);
      const released = await batch();
      expect(released.watermark).toBe("2025-06-01T10:29:00.000Z");
      expect(released.partitionEventTime?.map((p) => [p.partition, p.idle])).toEqual([[0, false], [1, true]]);

      clock += 1_000;
      await send(1, ["10:05:00", "10:40:00"]); // partition 1 wakes up: its old event is late now
      const woke = await batch();
      expect(woke.outcomes.late).toBe(1);
      expect(woke.outcomes.sink).toBe(1);
      expect(woke.partitionEventTime?.map((p) => [p.partition, p.idle])).toEqual([[0, false], [1, false]]);
      expect(woke.watermark).toBe("2025-06-01T10:29:00.000Z"); // min(10:30, 10:40) − 1m: never moves back
    } finally {
      await runner.close();
    }
  });
});
