// Guarantee proven: with `lateData: drop`, a row behind the watermark its batch used is counted as
// `late` in that batch's outcomes and written nowhere — not to dead_letters, not to the sink — while
// every batch still balances (input = sum of outcomes). Which rows are late is recomputed independently
// from the raw events read back from Kafka and the batches' offset ranges, and must match per batch.
// Real Kafka and Postgres.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { producePayments, simulatedClock } from "@sluice/producer";
import {
  createEngineFixture,
  drainPipeline,
  ledgerSpec,
  type EngineFixture,
} from "../testing/engine-fixture";
import { judgedEventsSql, loadReferenceBatches, loadReferenceEvents } from "../testing/reference-events";
import { totalOutcomes } from "./outcomes";

const DELAY_MS = 2 * 60_000;
let fx: EngineFixture;
let messages: number;

beforeAll(async () => {
  fx = await createEngineFixture("late_drop");
  ({
    manifest: {
      counts: { messages },
    },
  } = await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: 4000,
    partitions: 3,
    seed: 1234,
    clock: simulatedClock({ start: "2025-06-01T12:00:00Z", stepMs: 300 }),
    duplicateShare: 0.05,
    outOfOrderShare: 0.05,
    lateShare: 0.08,
    lateMinMs: 30_000,
    lateMaxMs: 10 * 60_000,
    log: () => undefined,
  }));
  await loadReferenceEvents(fx.pool, fx.kafka, fx.topic);
});
afterAll(() => fx?.close());

describe("lateData: drop", () => {
  it("late rows are counted in each batch's outcomes and written to neither dead letters nor the sink; every batch balances", async () => {
    const spec = ledgerSpec(fx.topic, {
      name: "late-drop",
      source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 500 } },
      eventTime: { column: "event_time", watermarkDelay: "2m", idleTimeout: "1h" },
      lateData: "drop",
      sink: { postgres: { table: "late_drop" } },
    });
    const { pipelineVersionId, progress } = await drainPipeline(fx, spec);
    await loadReferenceBatches(fx.pool, [pipelineVersionId]);
    // The reference: a row is late when its event time is behind the watermark its batch used.
    await fx.pool.query(
      `CREATE TABLE ref_late AS WITH ${judgedEventsSql(DELAY_MS)}
       SELECT batch_id, partition, "offset", event_id, prev_watermark IS NOT NULL AND event_time < prev_watermark AS late FROM ref_judged`,
    );

    // Counted: per batch, the engine's late outcomes are the recomputed late rows.
    const expectedPerBatch = await fx.pool.query<{ batch_id: string; n: number }>(
      `SELECT batch_id, count(*) FILTER (WHERE late)::int AS n FROM ref_late GROUP BY 1 ORDER BY 1`,
    );
    expect(progress.map((p) => [p.batchId, p.outcomes.late])).toEqual(
      expectedPerBatch.rows.map((r) => [Number(r.batch_id), r.n]),
    );
    const late = progress.reduce((s, p) => s + p.outcomes.late, 0);
    expect(late).toBeGreaterThan(50);

    // Not written anywhere: no dead letter at all (nothing else is malformed here), no late position in the sink.
    const deadLetters = await fx.pool.query(
      `SELECT outcome, count(*)::int AS n FROM dead_letters WHERE pipeline_version_id = $1 GROUP BY 1`,
      [pipelineVersionId],
    );
    expect(deadLetters.rows).toEqual([]);
    const lateInSink = await fx.pool.query(
      `SELECT count(*)::int AS n FROM late_drop s JOIN ref_late r ON r.late AND r.partition = s._partition AND r."offset" = s._offset`,
    );
    expect(lateInSink.rows[0].n).toBe(0);
    // The sink holds exactly the distinct events that arrived on time at least once.
    const missingOrExtra = await fx.pool.query(
      `(SELECT event_id FROM ref_late WHERE NOT late EXCEPT SELECT event_id FROM late_drop)
       UNION ALL (SELECT event_id FROM late_drop EXCEPT SELECT event_id FROM ref_late WHERE NOT late)`,
    );
    expect(missingOrExtra.rows).toEqual([]);

    // Accounting balances per batch and in total: every message is sink, duplicate or late.
    for (const p of progress) expect(totalOutcomes(p.outcomes)).toBe(p.inputRows);
    const sum = (f: (o: (typeof progress)[number]["outcomes"]) => number) =>
      progress.reduce((s, p) => s + f(p.outcomes), 0);
    const sinkRows = (await fx.pool.query(`SELECT count(*)::int AS n FROM late_drop`)).rows[0].n as number;
    expect(sum((o) => o.sink)).toBe(sinkRows);
    expect(sum((o) => o.sink) + sum((o) => o.duplicate) + late).toBe(messages);
    expect(progress.reduce((s, p) => s + p.inputRows, 0)).toBe(messages);
  });
});
