// Guarantee: reading and processing batch N+1 while batch N commits changes nothing but speed. Over an
// adversarial stream (duplicates re-sent up to 3,000 messages later — across many batch boundaries,
// some after their key was evicted from dedup state — malformed rows, late and out-of-order events)
// a pipeline that reads ahead commits exactly the batches, outcomes, sink rows, dead letters and dedup
// state of one that does not — a ledger, and windows with their state and results. And a runner whose
// read-ahead batch is overtaken by another runner drops it: it is fenced off, and nothing is written
// twice.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { producePayments, simulatedClock } from "@sluice/producer";
import { FencedError } from "../errors";
import { registerPipelineVersion } from "../store/register-version";
import {
  createEngineFixture,
  drainPipeline,
  ledgerSpec,
  type EngineFixture,
} from "../testing/engine-fixture";
import { settlementsSpec } from "../testing/settlements";
import { PipelineRunner } from "./pipeline-runner";

let fx: EngineFixture;
beforeAll(async () => {
  fx = await createEngineFixture("read_ahead");
  await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: 15_000,
    partitions: 3,
    seed: "read-ahead",
    clock: simulatedClock({ stepMs: 100 }),
    duplicateShare: 0.1,
    duplicateMaxDelay: 3000,
    malformedShare: 0.01,
    lateShare: 0.01,
    outOfOrderShare: 0.05,
    manifest: "counts",
    log: () => undefined,
  });
});
afterAll(() => fx?.close());

// Dedup keys are kept 20 s (200 events) while the watermark trails by 5 min: many re-sends arrive after
// their key was evicted and are not late. The sink upserts (it does not skip keys it holds, as an append
// ledger would), so dedup state alone decides what is a duplicate: a read-ahead batch that saw the wrong
// state would count and write different rows.
const spec = (name: string) =>
  ledgerSpec(fx.topic, {
    name,
    source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 1000 } },
    eventTime: { column: "event_time", watermarkDelay: "5m" },
    dedupe: { key: ["event_id"], within: "20s" },
    sink: { postgres: { table: name.replaceAll("-", "_"), mode: "upsert", key: ["event_id"] } },
  });

async function stored(pipelineVersionId: string, table: string) {
  const q = async (sql: string) => (await fx.pool.query(sql, [pipelineVersionId])).rows;
  return {
    sink: await q(
      `SELECT event_id, amount::text, event_time, _rescued, _partition, _offset, _batch_id FROM "${table}" WHERE $1::text IS NOT NULL ORDER BY event_id`,
    ),
    deadLetters: await q(
      `SELECT batch_id, outcome, reason, partition, "offset" FROM dead_letters WHERE pipeline_version_id = $1 ORDER BY partition, "offset"`,
    ),
    dedupState: await q(
      `SELECT key, event_time FROM dedup_state WHERE pipeline_version_id = $1 ORDER BY key`,
    ),
  };
}

const comparable = (p: Awaited<ReturnType<typeof drainPipeline>>["progress"][number]) => ({
  batchId: p.batchId,
  sources: p.sources.map(({ partition, startOffset, endOffset }) => ({ partition, startOffset, endOffset })),
  outcomes: p.outcomes,
  expectations: p.expectations,
  watermark: p.watermark,
  stateRows: p.stateRows,
  stateBytes: p.stateBytes,
});

describe("read-ahead", () => {
  it("commits exactly what a runner that does not read ahead commits", async () => {
    const plain = await drainPipeline(fx, spec("plain-ledger"), "test", { readAhead: false });
    const ahead = await drainPipeline(fx, spec("ahead-ledger"), "test");

    expect(plain.progress.some((p) => p.preparedAhead)).toBe(false);
    // All but the first batch (and a final partial one) were read while the previous one committed.
    expect(ahead.progress.filter((p) => p.preparedAhead).length).toBeGreaterThanOrEqual(
      ahead.progress.length - 2,
    );
    // The stream exercises what read-ahead must get right: duplicates across batches, after eviction, late rows.
    const total = (k: "duplicate" | "late" | "deadLetter") =>
      ahead.progress.reduce((n, p) => n + p.outcomes[k], 0);
    expect(total("duplicate")).toBeGreaterThan(500);
    expect(total("late")).toBeGreaterThan(50);
    expect(total("deadLetter")).toBeGreaterThan(50);

    expect(ahead.progress.map(comparable)).toEqual(plain.progress.map(comparable));
    expect(await stored(ahead.pipelineVersionId, "ahead_ledger")).toEqual(
      await stored(plain.pipelineVersionId, "plain_ledger"),
    );
  });

  it("windows: the same batches, windows, state and results when their rows were read and processed ahead", async () => {
    // Sliding windows (each row in two) written once when final, with lateness: a batch processed
    // ahead must judge late rows and duplicates as its turn would, or windows and state differ.
    const windowed = (name: string) =>
      settlementsSpec(
        fx.topic,
        name,
        name.replaceAll("-", "_"),
        {
          window: { sliding: { size: "2m", slide: "1m" } },
          outputMode: "append",
          allowedLateness: "1m",
        },
        { dedupe: { key: ["event_id"], within: "watermark" } },
      );
    const plain = await drainPipeline(fx, windowed("plain-windows"), "test", { readAhead: false });
    const ahead = await drainPipeline(fx, windowed("ahead-windows"), "test");

    expect(ahead.progress.filter((p) => p.preparedAhead).length).toBeGreaterThanOrEqual(
      ahead.progress.length - 2,
    );
    const withWindows = (p: (typeof ahead.progress)[number]) => ({
      ...comparable(p),
      windows: {
        updated: p.operator?.windowsUpdated,
        results: p.operator?.resultRows,
        evicted: p.operator?.windowsEvicted,
      },
    });
    // The stream reaches final windows, evictions and late rows, not only open windows.
    expect(ahead.progress.reduce((n, p) => n + Number(p.operator?.windowsEvicted ?? 0), 0)).toBeGreaterThan(
      100,
    );
    expect(ahead.progress.reduce((n, p) => n + p.outcomes.late, 0)).toBeGreaterThan(20);
    expect(ahead.progress.map(withWindows)).toEqual(plain.progress.map(withWindows));

    const rows = async (pipelineVersionId: string, table: string) => ({
      sink: (
        await fx.pool.query(
          `SELECT merchant_id, window_start, settled::text, refunded::text, events, customers, largest::text, mean::text, _batch_id FROM "${table}" ORDER BY window_start, merchant_id`,
        )
      ).rows,
      state: (
        await fx.pool.query(
          `SELECT group_key, window_start, accumulators, bytes FROM window_state WHERE pipeline_version_id = $1 ORDER BY window_start, group_key`,
          [pipelineVersionId],
        )
      ).rows,
    });
    const a = await rows(ahead.pipelineVersionId, "ahead_windows");
    expect(a.sink.length).toBeGreaterThan(100);
    expect(a).toEqual(await rows(plain.pipelineVersionId, "plain_windows"));
  });

  it("a read-ahead batch overtaken by another runner is dropped: the first runner is fenced off, nothing is written twice", async () => {
    const s = spec("fenced-ledger");
    const { pipelineVersionId } = await registerPipelineVersion(fx.pool, s);
    const first = await PipelineRunner.open(fx.resources, { pipelineVersionId, spec: s, owner: "first" });
    let second: PipelineRunner | undefined;
    try {
      // `first` commits batch 0 and reads batch 1 ahead; then `second` takes over and commits 1–3.
      expect((await first.runBatch()).kind).toBe("committed");
      second = await PipelineRunner.open(fx.resources, { pipelineVersionId, spec: s, owner: "second" });
      for (let i = 0; i < 3; i++) expect((await second.runBatch()).kind).toBe("committed");
      // `first` drops its batch 1 (the checkpoint is past it) and cannot plan batch 4: fenced.
      await expect(first.runBatch()).rejects.toBeInstanceOf(FencedError);
      let batches = 0;
      while ((await second.runBatch()).kind === "committed") batches++;
      expect(batches).toBeGreaterThan(5);
    } finally {
      await first.close();
      await second?.close();
    }
    const log = await fx.pool.query<{ batch_id: string }>(
      `SELECT batch_id FROM batch_log WHERE pipeline_version_id = $1 ORDER BY batch_id`,
      [pipelineVersionId],
    );
    expect(log.rows.map((r) => Number(r.batch_id))).toEqual(log.rows.map((_, i) => i)); // gap-free
    const plainId = (
      await fx.pool.query<{ id: string }>(
        `SELECT v.id FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = 'plain-ledger'`,
      )
    ).rows[0]!.id;
    const a = await stored(plainId, "plain_ledger");
    const b = await stored(pipelineVersionId, "fenced_ledger");
    expect(b.sink.map((r) => r.event_id)).toEqual(a.sink.map((r) => r.event_id));
    expect(b.deadLetters.length).toBe(a.deadLetters.length);
  });
});
