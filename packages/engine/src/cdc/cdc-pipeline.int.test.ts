// CDC apply-changes on real Kafka and Postgres (issue 4 "Prove it"): a customer-status change feed
// whose changes for the same customer are shuffled (older versions arrive after newer ones, some at
// the very end), repeated, and spread over three partitions by change id, read in small batches. The
// SCD1 table must equal the feed applied in sequence order, and the SCD2 history must hold every
// version with valid_from / valid_to / is_current exactly as in-order application would — also when
// three partition groups apply the feed side by side (a customer's changes arrive on partitions of
// every group, each group's commit applying its changes to the points committed by then).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { produceCustomerChanges, type CustomerChange } from "@sluice/producer";
import { totalOutcomes } from "../batch/outcomes";
import type { BatchProgress } from "../store/progress-record";
import {
  customerStatusSpec,
  expectedScd1,
  expectedScd2,
  SCD1_COLUMNS,
  SCD2_COLUMNS,
} from "../testing/cdc-fixture";
import {
  createEngineFixture,
  drainPipeline,
  drainRunner,
  type EngineFixture,
} from "../testing/engine-fixture";
import { PipelineRunner } from "../runner/pipeline-runner";
import { registerPipelineVersion } from "../store/register-version";

let fx: EngineFixture;
let feed: CustomerChange[];

beforeAll(async () => {
  fx = await createEngineFixture("cdc");
  ({ feed } = await produceCustomerChanges({
    kafka: fx.kafka,
    topic: fx.topic,
    partitions: 3,
    keyBy: "change",
    seed: 11,
    changes: 3000,
    customers: 60,
    deleteShare: 0.1,
    shuffleShare: 0.3,
    shuffleWindow: 4,
    duplicateShare: 0.05,
  }));
});
afterAll(() => fx?.close());

async function drain(spec: ReturnType<typeof customerStatusSpec>): Promise<BatchProgress[]> {
  return (await drainPipeline(fx, spec)).progress;
}

describe("CDC apply-changes", () => {
  it("SCD1: shuffled updates and deletes across partitions and batches end in the same table as in-order application; older sequences are stale", async () => {
    const progress = await drain(
      customerStatusSpec(fx.topic, {
        name: "customer-status-scd1",
        table: "customer_status_scd1",
        scdType: 1,
      }),
    );
    const actual = await fx.pool.query(
      `SELECT ${SCD1_COLUMNS} FROM customer_status_scd1 ORDER BY customer_id`,
    );
    expect(actual.rows).toEqual(expectedScd1(feed));
    const stale = progress.reduce((s, p) => s + p.outcomes.stale, 0);
    const duplicates = progress.reduce((s, p) => s + p.outcomes.duplicate, 0);
    expect(stale).toBeGreaterThan(50);
    expect(duplicates).toBe(feed.length - new Set(feed.map((c) => c.change_id)).size);
    for (const p of progress) expect(totalOutcomes(p.outcomes)).toBe(p.inputRows);
    console.log(
      `cdc scd1: ${progress.length} batches, ${actual.rows.length} customers, stale ${stale}, duplicates ${duplicates}`,
    );
  });

  it("SCD2: the history is complete — every version, valid_from / valid_to / is_current as in sequence order", async () => {
    const progress = await drain(
      customerStatusSpec(fx.topic, {
        name: "customer-status-scd2",
        table: "customer_status_scd2",
        scdType: 2,
      }),
    );
    const actual = await fx.pool.query(
      `SELECT ${SCD2_COLUMNS} FROM customer_status_scd2 ORDER BY customer_id, valid_from`,
    );
    expect(actual.rows).toEqual(expectedScd2(feed));
    // Late versions were slotted into history (a closed version's valid_to rewritten), not dropped.
    const historyUpdated = progress.reduce((s, p) => s + Number(p.operator?.historyUpdated ?? 0), 0);
    expect(historyUpdated).toBeGreaterThan(50);
    expect(progress.reduce((s, p) => s + p.outcomes.stale, 0)).toBe(0);
    const current = await fx.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM customer_status_scd2 GROUP BY customer_id HAVING count(*) FILTER (WHERE is_current) > 1`,
    );
    expect(current.rows).toEqual([]);
  });

  it("in three partition groups at once (a customer's changes on partitions of every group): the same SCD1 table and SCD2 history", async () => {
    const progress: BatchProgress[] = [];
    for (const scdType of [1, 2] as const) {
      const base = customerStatusSpec(fx.topic, {
        name: `customer-status-groups-${scdType}`,
        table: `customer_status_groups_${scdType}`,
        scdType,
        maxOffsetsPerTrigger: 150,
      });
      const spec = { ...base, source: { kafka: { ...base.source.kafka, parallelism: 3 } } };
      const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
      const runners = await Promise.all(
        [0, 1, 2].map((group) =>
          PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner: `cdc-g${group}`, group }),
        ),
      );
      progress.push(...(await Promise.all(runners.map((r) => drainRunner(r)))).flat());
    }
    const scd1 = await fx.pool.query(
      `SELECT ${SCD1_COLUMNS} FROM customer_status_groups_1 ORDER BY customer_id`,
    );
    expect(scd1.rows).toEqual(expectedScd1(feed));
    const scd2 = await fx.pool.query(
      `SELECT ${SCD2_COLUMNS} FROM customer_status_groups_2 ORDER BY customer_id, valid_from`,
    );
    expect(scd2.rows).toEqual(expectedScd2(feed));
    for (const p of progress) expect(totalOutcomes(p.outcomes)).toBe(p.inputRows);
    // Stale changes are counted where they were found: in the commits, by each group.
    expect(progress.reduce((s, p) => s + p.outcomes.stale, 0)).toBeGreaterThan(50);
    expect(new Set(progress.map((p) => p.group?.no))).toEqual(new Set([0, 1, 2]));
  });
});
