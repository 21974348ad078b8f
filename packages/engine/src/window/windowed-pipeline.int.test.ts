// Event-time windows on real Kafka and Postgres (product.md semantics 4, issue 4 "Prove it"):
// - the reference check: a seeded stream with out-of-order, late and duplicate events over three
//   partitions; the expected per-window results are recomputed with one SQL query over the raw events
//   read back from Kafka (which events were late follows from the watermark recomputed from those raw
//   events and the batches' offset ranges), and compared to the sink exactly — update mode (tumbling,
//   allowedLateness 3m) and append mode (sliding, allowedLateness 1m) over the same topic;
// - a sale at 23:58 published at 00:16 lands in the 23:55 window;
// - window and dedup state stay bounded over a long stream.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { producePayments, simulatedClock, type Manifest } from "@sluice/producer";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { totalOutcomes } from "../batch/outcomes";
import { PipelineRunner } from "../runner/pipeline-runner";
import type { BatchProgress } from "../store/progress-record";
import { registerPipelineVersion } from "../store/register-version";
import { batchLog, createEngineFixture, drainPipeline, type EngineFixture } from "../testing/engine-fixture";
import { judgedEventsSql, loadReferenceBatches, loadReferenceEvents } from "../testing/reference-events";
import {
  EXPECTED_MEASURES,
  settlementsSpec,
  settlementsWorkload,
  SINK_COLUMNS,
  tumbling5mLateness3mSql,
} from "../testing/settlements";

const MIN = 60_000;
let fx: EngineFixture;
let manifest: Manifest;

function drain(spec: TPipelineSpec): Promise<{ pipelineVersionId: string; progress: BatchProgress[] }> {
  return drainPipeline(fx, spec);
}

beforeAll(async () => {
  fx = await createEngineFixture("windows");
  ({ manifest } = await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    ...settlementsWorkload(),
    log: () => undefined,
  }));
  await loadReferenceEvents(fx.pool, fx.kafka, fx.topic);
});
afterAll(() => fx?.close());

describe("event-time windows: the reference check", () => {
  it("update mode (tumbling 5m, allowedLateness 3m): every window equals the SQL recomputation over the raw events", async () => {
    const spec = settlementsSpec(fx.topic, "settlements-update", "settlements_update", {
      window: { tumbling: "5m" },
      outputMode: "update",
      allowedLateness: "3m",
    });
    const { pipelineVersionId, progress } = await drain(spec);
    await loadReferenceBatches(fx.pool, [pipelineVersionId]);

    const expected = await fx.pool.query(tumbling5mLateness3mSql());
    const actual = await fx.pool.query(
      `SELECT ${SINK_COLUMNS} FROM settlements_update ORDER BY window_start, merchant_id`,
    );
    expect(actual.rows.length).toBeGreaterThan(50);
    expect(actual.rows).toEqual(expected.rows);

    // Which rows were late is the same in the engine (dead letters) and in the recomputation.
    const lateExpected = await fx.pool.query(
      `WITH ${judgedEventsSql(2 * MIN)}
       SELECT partition, "offset"::text FROM ref_judged
        WHERE type IN ('settlement', 'refund') AND prev_watermark IS NOT NULL AND event_time < prev_watermark - interval '3 minutes' ORDER BY 1, 2`,
    );
    const lateActual = await fx.pool.query(
      `SELECT partition, "offset"::text FROM dead_letters WHERE pipeline_version_id = $1 AND outcome = 'late' ORDER BY 1, 2`,
      [pipelineVersionId],
    );
    expect(lateActual.rows).toEqual(lateExpected.rows);

    // The stream exercises every path: late beyond the policy, late but accepted, duplicates.
    const sum = (f: (p: BatchProgress) => number) => progress.reduce((s, p) => s + f(p), 0);
    const counts = {
      late: sum((p) => p.outcomes.late),
      lateAccepted: sum((p) => p.lateAccepted ?? 0),
      duplicate: sum((p) => p.outcomes.duplicate),
      input: sum((p) => p.inputRows),
    };
    expect(counts.late).toBeGreaterThan(10);
    expect(counts.lateAccepted).toBeGreaterThan(10);
    expect(counts.duplicate).toBeGreaterThan(0);
    expect(counts.input).toBe(manifest.counts.messages);
    for (const p of progress) expect(totalOutcomes(p.outcomes)).toBe(p.inputRows);
    console.log(`windows update: ${actual.rows.length} windows, ${JSON.stringify(counts)}`);
  });

  it("append mode (sliding 10m every 5m, allowedLateness 1m) over the same topic: each final window written once, equal to the recomputation", async () => {
    const spec = settlementsSpec(fx.topic, "settlements-append", "settlements_append", {
      window: { sliding: { size: "10m", slide: "5m" } },
      outputMode: "append",
      allowedLateness: "1m",
    });
    const { pipelineVersionId, progress } = await drain(spec);
    await loadReferenceBatches(fx.pool, [pipelineVersionId]);
    const finalWatermark = progress.at(-1)!.watermark!;

    const expected = await fx.pool.query(
      `WITH ${judgedEventsSql(2 * MIN)},
       accepted AS (SELECT DISTINCT ON (event_id) * FROM ref_judged
                     WHERE type IN ('settlement', 'refund') AND (prev_watermark IS NULL OR event_time >= prev_watermark - interval '1 minute')
                     ORDER BY event_id, batch_id),
       windowed AS (SELECT a.*, to_timestamp(floor(extract(epoch FROM event_time) / 300) * 300 - k * 300) AS window_start
                      FROM accepted a CROSS JOIN generate_series(0, 1) k)
       SELECT merchant_id, window_start, window_start + interval '10 minutes' AS window_end, ${EXPECTED_MEASURES}
         FROM windowed WHERE window_start + interval '11 minutes' <= $1::timestamptz
        GROUP BY 1, 2, 3 ORDER BY 2, 1`,
      [finalWatermark],
    );
    const actual = await fx.pool.query(
      `SELECT ${SINK_COLUMNS}, _batch_id FROM settlements_append ORDER BY window_start, merchant_id`,
    );
    expect(actual.rows.length).toBeGreaterThan(50);
    expect(actual.rows.map(({ _batch_id, ...r }) => r)).toEqual(expected.rows);
    // Written once: a window is emitted by exactly one batch, never rewritten.
    expect(new Set(actual.rows.map((r) => r._batch_id)).size).toBeGreaterThan(3);
    const emitted = progress.reduce((s, p) => s + Number(p.operator?.resultRows ?? 0), 0);
    expect(emitted).toBe(actual.rows.length);
  });
});

describe("keyed running aggregates (no window)", () => {
  it("complete mode rewrites the whole per-merchant result every batch; it equals the recomputation", async () => {
    const measures = {
      settled: "sum(amount)",
      refunded: "sum(amount) if type == 'refund'",
      events: "count()",
      largest: "max(amount)",
      mean: "avg(amount)",
    };
    const spec = settlementsSpec(fx.topic, "settlements-complete", "settlements_complete", {
      outputMode: "complete",
      measures,
    });
    const { pipelineVersionId, progress } = await drain(spec);
    await loadReferenceBatches(fx.pool, [pipelineVersionId]);
    const expected = await fx.pool.query(
      `WITH ${judgedEventsSql(2 * MIN)},
       accepted AS (SELECT DISTINCT ON (event_id) * FROM ref_judged
                     WHERE type IN ('settlement', 'refund') AND (prev_watermark IS NULL OR event_time >= prev_watermark)
                     ORDER BY event_id, batch_id)
       SELECT merchant_id, sum(amount)::text AS settled, coalesce(sum(amount) FILTER (WHERE type = 'refund'), 0)::text AS refunded,
              count(*)::int AS events, max(amount)::text AS largest, round(avg(amount), 6)::text AS mean
         FROM accepted GROUP BY 1 ORDER BY 1`,
    );
    const actual = await fx.pool.query(
      `SELECT merchant_id, settled::text, refunded::text, events::int, largest::text, mean::text, _batch_id::int FROM settlements_complete ORDER BY merchant_id`,
    );
    expect(actual.rows.map(({ _batch_id, ...r }) => r)).toEqual(expected.rows);
    // Every row was rewritten by the last batch, and every batch wrote every group seen so far.
    expect(new Set(actual.rows.map((r) => r._batch_id))).toEqual(new Set([progress.at(-1)!.batchId]));
    expect(Number(progress.at(-1)!.operator?.resultRows)).toBe(actual.rows.length);
  });
});

describe("a new version continues the window state", () => {
  it("a spec change mid-stream (an added expectation) keeps the open windows: the result equals the recomputation", async () => {
    const aggregate = { window: { tumbling: "5m" }, outputMode: "update", allowedLateness: "3m" };
    const first = settlementsSpec(fx.topic, "settlements-continued", "settlements_continued", aggregate);
    const v1 = await registerPipelineVersion(fx.pool, first);
    const runner = await PipelineRunner.open(fx.resources, {
      pipelineVersionId: v1.pipelineVersionId,
      spec: first,
      owner: "v1",
    });
    try {
      for (let i = 0; i < 4; i++) await runner.runBatch();
    } finally {
      await runner.close();
    }
    const second = settlementsSpec(fx.topic, "settlements-continued", "settlements_continued", aggregate, {
      expectations: [{ name: "known_currency", expr: "currency in ['USD', 'EUR', 'GBP']", action: "warn" }],
    });
    const { pipelineVersionId: v2, continuedFrom } = await registerPipelineVersion(fx.pool, second);
    expect(continuedFrom?.pipelineVersionId).toBe(v1.pipelineVersionId);
    await drain(second);
    await loadReferenceBatches(fx.pool, [v1.pipelineVersionId, v2]);
    const expected = await fx.pool.query(tumbling5mLateness3mSql());
    const actual = await fx.pool.query(
      `SELECT ${SINK_COLUMNS} FROM settlements_continued ORDER BY window_start, merchant_id`,
    );
    expect(actual.rows).toEqual(expected.rows);
  });
});

describe("event time, not processing time", () => {
  it("a sale at 23:58 published at 00:16 lands in the 23:55 window, not the 00:15 one", async () => {
    const topic = `${fx.topic}-midnight`;
    const admin = fx.kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
    await admin.disconnect();
    const producer = fx.kafka.producer();
    await producer.connect();
    const event = (id: string, amount: string, eventTime: string) =>
      JSON.stringify({
        event_id: id,
        type: "settlement",
        merchant_id: "mer_midnight",
        customer_id: "cus_1",
        payment_id: "pay_1",
        seq: 1,
        amount,
        currency: "EUR",
        card_country: "FR",
        event_time: eventTime,
      });
    await producer.send({
      topic,
      messages: [
        // On time, published at 00:15:40.
        {
          key: "mer_midnight",
          value: event("evt_on_time", "10.00", "2025-01-01T00:15:30Z"),
          timestamp: String(Date.parse("2025-01-01T00:15:40Z")),
        },
        // A terminal reconnects: a sale that happened at 23:58, published at 00:16.
        {
          key: "mer_midnight",
          value: event("evt_terminal", "99.00", "2024-12-31T23:58:00Z"),
          timestamp: String(Date.parse("2025-01-01T00:16:00Z")),
        },
      ],
    });
    await producer.disconnect();
    const spec = settlementsSpec(
      topic,
      "midnight",
      "midnight_5m",
      {
        window: { tumbling: "5m" },
        outputMode: "update",
        measures: { settled: "sum(amount)", events: "count()" },
      },
      {
        eventTime: { column: "event_time", watermarkDelay: "30m" },
      },
    );
    await drain(spec);
    const rows = await fx.pool.query(
      `SELECT window_start, settled::text, events::int FROM midnight_5m ORDER BY window_start`,
    );
    expect(rows.rows).toEqual([
      { window_start: new Date("2024-12-31T23:55:00Z"), settled: "99.00", events: 1 },
      { window_start: new Date("2025-01-01T00:15:00Z"), settled: "10.00", events: 1 },
    ]);
  });
});

describe("bounded state", () => {
  it(
    "window and dedup state stay bounded over a long stream: evicted behind the watermark every batch",
    { timeout: 180_000 },
    async () => {
      const topic = `${fx.topic}-long`;
      await producePayments({
        topic,
        kafka: fx.kafka,
        count: 24_000,
        partitions: 3,
        seed: 99,
        merchants: 10,
        clock: simulatedClock({ start: "2025-03-02T00:00:00Z", stepMs: 250 }),
        duplicateShare: 0.02,
        outOfOrderShare: 0.05,
        manifest: "counts",
        log: () => undefined,
      });
      const spec = settlementsSpec(
        topic,
        "settlements-long",
        "settlements_long",
        { window: { tumbling: "5m" }, outputMode: "update", allowedLateness: "1m" },
        {
          source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 1200 } },
        },
      );
      const { pipelineVersionId, progress } = await drain(spec);
      // 24k events over 100 minutes of event time; each batch spans ~5 minutes of it. Only windows and
      // keys within watermarkDelay + allowedLateness + one batch of the newest event may be kept.
      const windowsTotal = await fx.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM settlements_long`,
      );
      const stateRows = progress.map((p) => p.stateRows);
      const maxState = Math.max(...stateRows);
      const eventsPerMinute = 240;
      const keptMinutes = 2 + 1 + 5 + 1;
      const bound = eventsPerMinute * keptMinutes + 10 * Math.ceil(keptMinutes / 5 + 1);
      console.log(
        `bounded state: ${progress.length} batches, ${windowsTotal.rows[0]!.n} windows written, state rows max ${maxState} (bound ${bound}), last ${stateRows.at(-1)}, bytes max ${Math.max(...progress.map((p) => p.stateBytes))}`,
      );
      expect(maxState).toBeLessThanOrEqual(bound);
      expect(windowsTotal.rows[0]!.n).toBeGreaterThan(150);
      // The second half of the stream holds no more state than the first: no growth with stream length.
      const half = Math.floor(stateRows.length / 2);
      expect(Math.max(...stateRows.slice(half))).toBeLessThanOrEqual(
        Math.max(...stateRows.slice(1, half)) * 1.25,
      );
      // The reported state equals what the tables hold.
      const held = await fx.pool.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM window_state WHERE pipeline_version_id = $1) + (SELECT count(*) FROM dedup_state WHERE pipeline_version_id = $1) AS n`,
        [pipelineVersionId],
      );
      expect(Number(held.rows[0]!.n)).toBe(stateRows.at(-1));
      const log = await batchLog(fx.pool, pipelineVersionId);
      expect(log.length).toBe(progress.length);
    },
  );
});
