// Guarantees: "fail means stop" (product.md, semantics 7) and deterministic replay (semantics 2).
//
// A `fail` expectation violated by some rows of a batch stops `sluice run` with exit code 4 without
// committing anything of that batch; the rule, the row count and sample rows are recorded in
// batch_failures. Fixing the spec registers version 2, which continues version 1's checkpoint and its
// planned batch: running again re-runs the failed batch with the same batch id over the same offsets,
// and the sink ends up exact.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { producePayments } from "@sluice/producer";
import { auditExactlyOnce } from "../testing/exactly-once-audit";
import {
  createEngineFixture,
  ledgerSpec,
  pipelineVersionIds,
  type EngineFixture,
} from "../testing/engine-fixture";
import { committedBatchIds, runSluice, specDir } from "../testing/sluice-process";

let fx: EngineFixture;
let specs: Awaited<ReturnType<typeof specDir>>;
let allIds: string[] = [];
let nonPositiveIds: Set<string>;

beforeAll(async () => {
  fx = await createEngineFixture("fail_expect");
  specs = await specDir();
  const common = { topic: fx.topic, kafka: fx.kafka, count: 1500, partitions: 2, log: () => undefined };
  // Clean first, then an upstream bug starts sending zero and negative amounts.
  const before = await producePayments({ ...common, seed: 10, idPrefix: "before" });
  const after = await producePayments({
    ...common,
    seed: 11,
    idPrefix: "after",
    nonPositiveAmountShare: 0.05,
  });
  allIds = [...before.manifest.eventIds!, ...after.manifest.eventIds!];
  nonPositiveIds = new Set(
    [...after.manifest.events!.values()].filter((e) => e.nonPositiveAmount).map((e) => e.eventId),
  );
  expect(nonPositiveIds.size).toBe(after.manifest.counts.nonPositiveAmount);
  expect(nonPositiveIds.size).toBeGreaterThan(20);
});
afterAll(async () => {
  await specs?.cleanup();
  await fx?.close();
});

const versionIds = () => pipelineVersionIds(fx.pool, "guarded-ledger");

describe("a fail expectation", () => {
  it("stops the pipeline at the violating batch without committing it, and after the spec is fixed the same batch re-runs over the same offsets", async () => {
    const spec = (action: "fail" | "drop") =>
      ledgerSpec(fx.topic, {
        name: "guarded-ledger",
        source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 500 } },
        expectations: [{ name: "positive_amount", expr: "amount > 0", action }],
      }) as unknown as Record<string, unknown>;
    const env = { databaseUrl: fx.db.url };

    // 1. The failing run: exit code 4, the rule named.
    const failing = await runSluice(
      ["run", await specs.write("guarded-v1", spec("fail")), "--until-caught-up"],
      env,
    );
    expect(failing.code).toBe(4);
    expect(failing.stderr).toMatch(/stopped by expectation "positive_amount" \(action: fail\)/);
    const [v1] = await versionIds();
    const cp = await fx.pool.query<{ last_batch_id: string }>(
      `SELECT last_batch_id FROM checkpoints WHERE pipeline_version_id = $1`,
      [v1],
    );
    const failedBatch = Number(cp.rows[0]!.last_batch_id) + 1;
    // Clean batches before it were committed; the pipeline stopped at the first violating one.
    expect(failedBatch).toBeGreaterThan(0);
    expect(committedBatchIds(failing.stdout.split("\n"))).toEqual(
      Array.from({ length: failedBatch }, (_, i) => i),
    );

    // 2. The failure record: which rule, how many rows, sample rows that really violate it.
    const failures = await fx.pool.query<{
      batch_id: string;
      kind: string;
      rule: string;
      row_count: number;
      samples: Record<string, unknown>[];
    }>(`SELECT batch_id, kind, rule, row_count, samples FROM batch_failures WHERE pipeline_version_id = $1`, [
      v1,
    ]);
    expect(failures.rows).toHaveLength(1);
    const failure = failures.rows[0]!;
    expect({ batch: Number(failure.batch_id), kind: failure.kind, rule: failure.rule }).toEqual({
      batch: failedBatch,
      kind: "expectation",
      rule: "positive_amount",
    });
    expect(failure.row_count).toBeGreaterThan(0);
    const plan = await fx.pool.query<{ ranges: { partition: number; from: number; to: number }[] }>(
      `SELECT ranges FROM offset_log WHERE pipeline_version_id = $1 AND batch_id = $2`,
      [v1, failedBatch],
    );
    const planned = plan.rows[0]!.ranges;
    expect(failure.samples.length).toBe(Math.min(5, failure.row_count));
    for (const s of failure.samples) {
      expect(Number(s.amount)).toBeLessThanOrEqual(0);
      expect(nonPositiveIds.has(String(s.event_id))).toBe(true);
      const range = planned.find((r) => r.partition === s._partition)!;
      expect(Number(s._offset)).toBeGreaterThanOrEqual(range.from);
      expect(Number(s._offset)).toBeLessThan(range.to);
    }

    // 3. Nothing of the failed batch was committed: no progress record, no sink rows, no dead letters.
    const written = await fx.pool.query<{ log: string; sink: string; dl: string }>(
      `SELECT (SELECT count(*) FROM batch_log WHERE pipeline_version_id = $1 AND batch_id >= $2) AS log,
              (SELECT count(*) FROM ledger WHERE _batch_id >= $2) AS sink,
              (SELECT count(*) FROM dead_letters WHERE pipeline_version_id = $1 AND batch_id >= $2) AS dl`,
      [v1, failedBatch],
    );
    expect(written.rows[0]).toEqual({ log: "0", sink: "0", dl: "0" });

    // 4. Fix the spec (drop instead of fail) and run again: version 2 continues at the same batch.
    const fixed = await runSluice(
      ["run", await specs.write("guarded-v2", spec("drop")), "--until-caught-up"],
      env,
    );
    expect({ code: fixed.code, stderr: fixed.stderr.slice(-1000) }).toEqual({
      code: 0,
      stderr: fixed.stderr.slice(-1000),
    });
    expect(fixed.stdout).toMatch(/version 2 registered \(continues from version 1\)/);
    const [, v2] = await versionIds();
    const rerun = await fx.pool.query<{
      batch_id: string;
      progress: {
        replayed: boolean;
        sources: { partition: number; startOffset: number; endOffset: number }[];
      };
      outcomes: { dropped: Record<string, number> };
    }>(
      `SELECT batch_id, progress, outcomes FROM batch_log WHERE pipeline_version_id = $1 ORDER BY batch_id LIMIT 1`,
      [v2],
    );
    const first = rerun.rows[0]!;
    expect(Number(first.batch_id)).toBe(failedBatch);
    expect(first.progress.replayed).toBe(true);
    expect(
      first.progress.sources.map((s) => ({ partition: s.partition, from: s.startOffset, to: s.endOffset })),
    ).toEqual(planned);
    // The same offsets hold the same violating rows: now dropped and counted instead of failing.
    expect(first.outcomes.dropped.positive_amount).toBe(failure.row_count);

    // 5. The sink is exact across both versions: every event except the dropped ones, once.
    const { batches } = await auditExactlyOnce({
      pool: fx.pool,
      kafka: fx.kafka,
      topic: fx.topic,
      table: "ledger",
      versionIds: [v1!, v2!],
      expectedIds: allIds.filter((id) => !nonPositiveIds.has(id)),
    });
    expect(batches.reduce((n, b) => n + (b.outcomes.dropped.positive_amount ?? 0), 0)).toBe(
      nonPositiveIds.size,
    );
  });
});
