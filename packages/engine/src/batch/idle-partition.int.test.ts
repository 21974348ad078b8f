// The watermark follows the slowest *active* partition (product.md semantics 4): on real Kafka, a
// partition that stops sending holds the watermark back until it has read nothing for idleTimeout
// (the runner's clock, injected here), then stops counting; the progress record shows it idle. A row
// that arrives later on that partition behind the watermark is late — counted, never silent. And when
// the whole topic goes quiet, a batch without input still moves the watermark on, so append-mode
// windows behind it are written instead of waiting for the next record.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelineRunner } from "../runner/pipeline-runner";
import type { BatchProgress } from "../store/progress-record";
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
async function send(partition: number, eventTimes: string[], topic = fx.topic) {
  const producer = fx.kafka.producer();
  await producer.connect();
  await producer.send({
    topic,
    messages: eventTimes.map((t) => ({
      partition,
      value: JSON.stringify({
        event_id: `evt_${++n}`,
        type: "settlement",
        merchant_id: `mer_${partition}`,
        customer_id: "c",
        payment_id: "p",
        seq: n,
        amount: "1.00",
        currency: "EUR",
        card_country: "FR",
        event_time: `2025-06-01T${t}Z`,
      }),
    })),
  });
  await producer.disconnect();
}

describe("per-partition watermark", () => {
  it("an idle partition stops holding the watermark back after idleTimeout; its later rows behind it are late", async () => {
    let clock = Date.parse("2026-01-01T12:00:00Z");
    const spec = ledgerSpec(fx.topic, {
      eventTime: { column: "event_time", watermarkDelay: "1m", idleTimeout: "30s" },
      expectations: [],
    });
    const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
    const runner = await PipelineRunner.open(
      { ...fx.resources, now: () => new Date(clock) },
      { pipelineVersionId, spec, owner: "test" },
    );
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
      expect(released.partitionEventTime?.map((p) => [p.partition, p.idle])).toEqual([
        [0, false],
        [1, true],
      ]);

      clock += 1_000;
      await send(1, ["10:05:00", "10:40:00"]); // partition 1 wakes up: its old event is late now
      const woke = await batch();
      expect(woke.outcomes.late).toBe(1);
      expect(woke.outcomes.sink).toBe(1);
      expect(woke.partitionEventTime?.map((p) => [p.partition, p.idle])).toEqual([
        [0, false],
        [1, false],
      ]);
      expect(woke.watermark).toBe("2025-06-01T10:29:00.000Z"); // min(10:30, 10:40) − 1m: never moves back
    } finally {
      await runner.close();
    }
  });
});

describe("a topic that goes quiet", () => {
  it("releases the watermark with a batch without input once every partition is idle, and append windows behind it are written", async () => {
    let clock = Date.parse("2026-01-01T12:00:00Z");
    const topic = `${fx.topic}_quiet`;
    const admin = fx.kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
    await admin.disconnect();
    const spec = ledgerSpec(topic, {
      name: "quiet-windows",
      eventTime: { column: "event_time", watermarkDelay: "1m", idleTimeout: "30s" },
      expectations: [],
      aggregate: {
        groupBy: ["merchant_id"],
        window: { tumbling: "5m" },
        outputMode: "append",
        measures: { events: "count()" },
      },
      sink: { postgres: { table: "quiet_windows" } },
    });
    const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
    const runner = await PipelineRunner.open(
      { ...fx.resources, now: () => new Date(clock) },
      { pipelineVersionId, spec, owner: "test" },
    );
    const windows = async () =>
      (
        await fx.pool.query(
          `SELECT merchant_id, window_start, events FROM quiet_windows ORDER BY merchant_id`,
        )
      ).rows;
    try {
      await send(0, ["10:01:00", "10:04:00", "10:08:00"], topic);
      await send(1, ["10:02:00", "10:03:00"], topic);
      const first = await runner.runBatch();
      expect(first.kind === "committed" && first.progress.watermark).toBe("2025-06-01T10:02:00.000Z"); // min(10:08, 10:03) − 1m
      expect(await windows()).toEqual([]); // [10:00, 10:05) is still open: partition 1 holds the watermark at 10:02

      clock += 10_000; // nothing new, partitions not idle yet: no batch
      expect((await runner.runBatch()).kind).toBe("empty");

      clock += 30_000; // both partitions idle: the newest event time (10:08) counts
      const released = await runner.runBatch();
      if (released.kind !== "committed") throw new Error("expected a batch without input");
      expect(released.progress.inputRows).toBe(0);
      expect(released.progress.watermark).toBe("2025-06-01T10:07:00.000Z");
      expect(await windows()).toEqual([
        { merchant_id: "mer_0", window_start: new Date("2025-06-01T10:00:00Z"), events: "2" },
        { merchant_id: "mer_1", window_start: new Date("2025-06-01T10:00:00Z"), events: "2" },
      ]);

      clock += 60_000; // the watermark cannot move further without input: no more batches
      expect((await runner.runBatch()).kind).toBe("empty");
    } finally {
      await runner.close();
    }
  });
});
