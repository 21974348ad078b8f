// The ledger pipeline over an adversarial stream (duplicates, malformed rows, unknown fields) on real
// Kafka and Postgres. Proves: every distinct event id lands in the sink exactly once; malformed rows
// are dead letters / quarantined with reasons; every batch's accounting balances; batch ids are
// gap-free; a runner that was fenced off cannot commit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { producePayments, type ProduceResult } from "@sluice/producer";
import { totalOutcomes, type OutcomeCounts } from "../batch/outcomes";
import { FencedError } from "../errors";
import { registerPipelineVersion } from "../store/register-version";
import {
  batchLog,
  createEngineFixture,
  ledgerSpec,
  sinkEventIds,
  type EngineFixture,
} from "../testing/engine-fixture";
import { PipelineRunner } from "./pipeline-runner";

let fx: EngineFixture;
let produced: ProduceResult;

beforeAll(async () => {
  fx = await createEngineFixture("ledger");
  produced = await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: 6000,
    partitions: 3,
    seed: 7,
    duplicateShare: 0.05,
    malformedShare: 0.01,
    outOfOrderShare: 0.05,
    lateShare: 0,
    log: () => undefined,
  });
});
afterAll(() => fx.close());

describe("ledger pipeline on real Kafka and Postgres", () => {
  it("stores each distinct event id exactly once and accounts for every input row", async () => {
    const spec = ledgerSpec(fx.topic);
    const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
    const runner = await PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner: "test" });
    try {
      for (;;) {
        const r = await runner.runBatch();
        if (r.kind === "empty") break;
        expect(r.progress.inputRows).toBeLessThanOrEqual(2000);
      }
    } finally {
      await runner.close();
    }

    const m = produced.manifest;
    expect(await sinkEventIds(fx.pool)).toEqual([...m.eventIds!].sort());

    const batches = await batchLog(fx.pool, pipelineVersionId);
    expect(batches.map((b) => b.batchId)).toEqual(batches.map((_, i) => i));
    for (const b of batches) expect(totalOutcomes(b.outcomes as unknown as OutcomeCounts)).toBe(b.input_rows);
    const sum = (k: keyof OutcomeCounts) =>
      batches.reduce((s, b) => s + Number((b.outcomes as Record<string, unknown>)[k]), 0);
    expect(batches.reduce((s, b) => s + b.input_rows, 0)).toBe(m.counts.messages);
    expect(sum("duplicate")).toBe(m.counts.duplicates);
    expect(sum("deadLetter") + sum("quarantined")).toBe(m.counts.malformed);

    const dl = await fx.pool.query<{ outcome: string; reason: string; n: string }>(
      `SELECT outcome, count(*) AS n, min(reason) AS reason FROM dead_letters WHERE pipeline_version_id = $1 GROUP BY outcome`,
      [pipelineVersionId],
    );
    expect(dl.rows.reduce((s, r) => s + Number(r.n), 0)).toBe(m.counts.malformed);
    for (const r of dl.rows) expect(r.reason.length).toBeGreaterThan(10);
  });

  it("a runner fenced off by a newer one cannot commit, and nothing is written twice", async () => {
    const spec = ledgerSpec(fx.topic, {
      name: "ledger-fencing",
      sink: { postgres: { table: "ledger_fencing" } },
    });
    const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
    const expectedIds = [...produced.manifest.eventIds!];
    const first = await PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner: "first" });
    const second = await PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner: "second" });
    try {
      await expect(first.runBatch()).rejects.toBeInstanceOf(FencedError);
      for (;;) if ((await second.runBatch()).kind === "empty") break;
      // New input, so the stale runner has a batch to try: it still cannot plan or commit.
      const more = await producePayments({
        topic: fx.topic,
        kafka: fx.kafka,
        count: 50,
        seed: 8,
        idPrefix: "more",
        log: () => undefined,
      });
      await expect(first.runBatch()).rejects.toBeInstanceOf(FencedError);
      for (;;) if ((await second.runBatch()).kind === "empty") break;
      expectedIds.push(...more.manifest.eventIds!);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
    expect(await sinkEventIds(fx.pool, "ledger_fencing")).toEqual(expectedIds.sort());
  });
});
