// CDC state eviction (cdc.stateEviction: watermark, docs/engine.md "CDC apply-changes") on real Kafka
// and Postgres. A shuffled customer change feed (older versions overtaken by newer ones, deletes and
// re-inserts, repeats, spread over three partitions) is applied twice, by a pipeline that keeps every
// key's state and one that evicts, SCD1 and SCD2:
// - eviction is invisible: the same outcomes batch by batch and the same table;
// - the state shrinks by exactly the points whose eviction time the watermark passed (deleted keys;
//   SCD2 history behind the current version), and state_rows / state_bytes stay exact;
// - afterwards, an older change for an evicted deleted key is late (counted, dead-lettered), never
//   resurrects it; a newer one re-inserts it; a change stamped against its sequence is reported.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { produceCustomerChanges } from "@sluice/producer";
import { totalOutcomes } from "../batch/outcomes";
import type { BatchProgress } from "../store/progress-record";
import {
  customerStatusSpec,
  SCD1_COLUMNS,
  SCD2_COLUMNS,
  type CustomerStatusOptions,
} from "../testing/cdc-fixture";
import { createEngineFixture, drainPipeline, type EngineFixture } from "../testing/engine-fixture";

let fx: EngineFixture;
const topics = { scd1: "", scd2: "" };

beforeAll(async () => {
  fx = await createEngineFixture("cdc_evict");
  for (const scd of ["scd1", "scd2"] as const) {
    topics[scd] = `${fx.topic}-${scd}`;
    await produceCustomerChanges({
      kafka: fx.kafka,
      topic: topics[scd],
      partitions: 3,
      keyBy: "change",
      seed: 23,
      changes: 2400, // one per simulated second: 40 minutes of event time
      customers: 40,
      deleteShare: 0.2,
      shuffleShare: 0.3,
      shuffleWindow: 3,
      duplicateShare: 0.05,
    });
  }
});
afterAll(() => fx?.close());

interface Run {
  pipelineVersionId: string;
  progress: BatchProgress[];
}

const sum = (progress: BatchProgress[], f: (p: BatchProgress) => number) =>
  progress.reduce((s, p) => s + f(p), 0);
const operatorCount = (name: string) => (p: BatchProgress) => Number(p.operator?.[name] ?? 0);

async function cdcState(pv: string) {
  const res = await fx.pool.query<{
    entity_key: string;
    sequence: string;
    deleted: boolean;
    event_time: Date;
    evict_after: Date | null;
  }>(
    `SELECT entity_key, sequence, deleted, event_time, evict_after FROM cdc_state WHERE pipeline_version_id = $1 ORDER BY entity_key, sequence::int`,
    [pv],
  );
  return res.rows;
}

async function checkpoint(pv: string) {
  const res = await fx.pool.query<{
    watermark: Date;
    state_rows: string;
    state_bytes: string;
    event_time_max: { eventTime: string };
  }>(
    `SELECT watermark, state_rows, state_bytes, event_time_max FROM checkpoints WHERE pipeline_version_id = $1`,
    [pv],
  );
  return res.rows[0]!;
}

/** The checkpoint's state size equals what dedup_state and cdc_state hold, counted as the engine counts it. */
async function expectExactStateSize(pv: string): Promise<void> {
  const res = await fx.pool.query<{ rows: string; bytes: string }>(
    `SELECT (SELECT count(*) FROM dedup_state WHERE pipeline_version_id = $1) + (SELECT count(*) FROM cdc_state WHERE pipeline_version_id = $1) AS rows,
            (SELECT coalesce(sum(octet_length(key) + 8), 0) FROM dedup_state WHERE pipeline_version_id = $1)
          + (SELECT coalesce(sum(octet_length(entity_key) + octet_length(sequence) + 1), 0) FROM cdc_state WHERE pipeline_version_id = $1) AS bytes`,
    [pv],
  );
  const cp = await checkpoint(pv);
  expect({ rows: cp.state_rows, bytes: cp.state_bytes }).toEqual(res.rows[0]);
}

/** Drains `topic` with and without eviction: the same outcomes in every batch, the same table. */
async function drainBoth(
  opts: Omit<CustomerStatusOptions, "stateEviction" | "watermarkDelay">,
  columns: string,
): Promise<{ keep: Run; evict: Run }> {
  const topic = topics[opts.scdType === 1 ? "scd1" : "scd2"];
  const run = (evict: boolean) =>
    drainPipeline(
      fx,
      customerStatusSpec(topic, {
        ...opts,
        name: `${opts.name}-${evict ? "evict" : "keep"}`,
        table: `${opts.table}_${evict ? "evict" : "keep"}`,
        watermarkDelay: "2m",
        stateEviction: evict,
      }),
    );
  const keep = await run(false);
  const evict = await run(true);
  expect(evict.progress.map((p) => p.outcomes)).toEqual(keep.progress.map((p) => p.outcomes));
  for (const p of evict.progress) expect(totalOutcomes(p.outcomes)).toBe(p.inputRows);
  const table = (t: string) => fx.pool.query(`SELECT ${columns} FROM ${t} ORDER BY 1, 2`).then((r) => r.rows);
  expect(await table(`${opts.table}_evict`)).toEqual(await table(`${opts.table}_keep`));
  return { keep, evict };
}

/**
 * The feed, then one change an hour later on every partition, which moves the watermark past all of
 * the feed: eviction is invisible throughout, the state shrinks in that batch by exactly the points
 * the watermark passed, and its size stays exact.
 */
async function feedThenAnHourLater(
  opts: Omit<CustomerStatusOptions, "stateEviction" | "watermarkDelay">,
  columns: string,
): Promise<{ keep: Run; evict: Run }> {
  const runs = await drainBoth(opts, columns);
  const last = Date.parse((await checkpoint(runs.evict.pipelineVersionId)).event_time_max.eventTime);
  const topic = topics[opts.scdType === 1 ? "scd1" : "scd2"];
  const later = [0, 1, 2].map((partition) => ({
    partition,
    ...change(`cus_later_${partition}`, 1, "I", new Date(last + 3_600_000), `chg_later_${partition}`),
  }));
  await send(topic, later);
  const { keep, evict } = await drainBoth(opts, columns);
  expect(sum(evict.progress, (p) => p.inputRows)).toBe(3);

  const watermark = (await checkpoint(evict.pipelineVersionId)).watermark;
  expect(watermark.getTime()).toBeGreaterThan(last);
  const kept = (await cdcState(keep.pipelineVersionId)).filter(
    (p) => !(p.evict_after && p.evict_after < watermark),
  );
  const all = await cdcState(keep.pipelineVersionId);
  expect(await cdcState(evict.pipelineVersionId)).toEqual(kept);
  expect(kept.length).toBeLessThan(all.length);
  // That batch added three changes, and the state still shrank.
  const before = runs.evict.progress.at(-1)!.stateRows;
  expect(evict.progress.at(-1)!.stateRows).toBeLessThan(before);
  expect(keep.progress.at(-1)!.stateRows).toBe(runs.keep.progress.at(-1)!.stateRows + 6); // 3 points, 3 dedup keys
  expect(Number(evict.progress.at(-1)!.operator?.evicted)).toBeGreaterThan(0);
  await expectExactStateSize(keep.pipelineVersionId);
  await expectExactStateSize(evict.pipelineVersionId);
  // The feed stamps each customer's versions in order: nothing contradicts the precondition.
  expect(sum([...runs.evict.progress, ...evict.progress], operatorCount("orderViolations"))).toBe(0);
  console.log(
    `cdc scd${opts.scdType}: ${runs.evict.progress.length} batches; cdc state ${all.length} points kept vs ${kept.length} with eviction; state rows ${before} → ${evict.progress.at(-1)!.stateRows} in the batch an hour later (without eviction ${keep.progress.at(-1)!.stateRows}); late ${sum(runs.evict.progress, (p) => p.outcomes.late)}, stale ${sum(runs.evict.progress, (p) => p.outcomes.stale)}`,
  );
  return {
    keep: { ...keep, progress: [...runs.keep.progress, ...keep.progress] },
    evict: { ...evict, progress: [...runs.evict.progress, ...evict.progress] },
  };
}

/** Appends changes to a topic (keyed by change id, as the feed is). */
async function send(
  topic: string,
  changes: ({ partition?: number } & Record<string, unknown>)[],
): Promise<void> {
  const producer = fx.kafka.producer();
  await producer.connect();
  const messages = changes.map(({ partition, ...c }) => ({
    key: String(c.change_id),
    value: JSON.stringify(c),
    ...(partition !== undefined ? { partition } : {}),
  }));
  await producer.send({ topic, acks: -1, messages });
  await producer.disconnect();
}

const change = (customer: string, version: number, op: "I" | "U" | "D", changedAt: Date, id: string) => ({
  change_id: id,
  customer_id: customer,
  status: op === "D" ? "closed" : "active",
  risk_score: op === "D" ? null : 50,
  op,
  changed_at: changedAt.toISOString(),
  version,
});

/** The evicted deleted keys: a customer whose newest point (kept without eviction) is a delete the watermark passed. */
async function evictedTombstones(keep: Run, evict: Run) {
  const watermark = (await checkpoint(evict.pipelineVersionId)).watermark;
  const newest = new Map<string, Awaited<ReturnType<typeof cdcState>>[number]>();
  for (const p of await cdcState(keep.pipelineVersionId)) newest.set(p.entity_key, p); // ordered by sequence
  const evictedKeys = new Set((await cdcState(evict.pipelineVersionId)).map((p) => p.entity_key));
  return [...newest.values()]
    .filter((p) => p.deleted && p.event_time < watermark)
    .map((p) => ({
      customer: (JSON.parse(p.entity_key) as string[])[0]!,
      version: Number(p.sequence),
      at: p.event_time,
      inState: evictedKeys.has(p.entity_key),
    }));
}

describe("CDC state eviction behind the watermark", () => {
  it("SCD1: deleted keys are forgotten; an older change for one arriving later is late, not resurrected", async () => {
    const scd1 = { name: "status-scd1", table: "status_scd1", scdType: 1 as const };
    const runs = await feedThenAnHourLater(scd1, SCD1_COLUMNS);
    const tombstones = await evictedTombstones(runs.keep, runs.evict);
    expect(tombstones.length).toBeGreaterThanOrEqual(2);
    expect(tombstones.every((t) => !t.inState)).toBe(true);
    // SCD1 evicts deleted keys only: a live customer keeps its point (the table row's sequence).
    const live = (await cdcState(runs.evict.pipelineVersionId)).find(
      (p) => !p.deleted && Number(p.sequence) > 1,
    )!;
    const cp = await checkpoint(runs.evict.pipelineVersionId);
    const [a, b] = tombstones;
    const liveCustomer = (JSON.parse(live.entity_key) as string[])[0]!;
    await send(topics.scd1, [
      change(a!.customer, a!.version - 1, "U", new Date(a!.at.getTime() - 1000), "chg_after_eviction_older"),
      change(
        b!.customer,
        b!.version + 1,
        "I",
        new Date(cp.watermark.getTime() + 60_000),
        "chg_after_eviction_newer",
      ),
      // An older version stamped after everything: contradicts the precondition, and is reported.
      change(
        liveCustomer,
        Number(live.sequence) - 1,
        "U",
        new Date(Date.parse(cp.event_time_max.eventTime) + 1000),
        "chg_against_order",
      ),
    ]);
    const after = await drainBoth(scd1, SCD1_COLUMNS);
    for (const { progress } of [after.keep, after.evict]) {
      expect(sum(progress, (p) => p.inputRows)).toBe(3);
      expect(sum(progress, (p) => p.outcomes.late)).toBe(1);
      expect(sum(progress, (p) => p.outcomes.stale)).toBe(1);
      expect(sum(progress, (p) => p.outcomes.sink)).toBe(1);
      expect(sum(progress, operatorCount("orderViolations"))).toBe(1);
    }
    const late = await fx.pool.query(
      `SELECT outcome, reason FROM dead_letters WHERE pipeline_version_id = $1 AND payload->>'change_id' = 'chg_after_eviction_older'`,
      [runs.evict.pipelineVersionId],
    );
    expect(late.rows).toEqual([
      { outcome: "late", reason: expect.stringMatching(/is behind the watermark/) },
    ]);
    const rows = await fx.pool.query(
      `SELECT customer_id, version::int FROM status_scd1_evict WHERE customer_id = ANY($1) ORDER BY 1`,
      [[a!.customer, b!.customer]],
    );
    expect(rows.rows).toEqual([{ customer_id: b!.customer, version: b!.version + 1 }]);
    await expectExactStateSize(runs.evict.pipelineVersionId);
  });

  it("SCD2: history behind the current version and deleted keys leave the state; the history table is unchanged", async () => {
    const scd2 = { name: "status-scd2", table: "status_scd2", scdType: 2 as const };
    const runs = await feedThenAnHourLater(scd2, SCD2_COLUMNS);
    // Every stored eviction time is the rule applied to the key's points (recomputed here in SQL).
    const wrong = await fx.pool.query(
      `SELECT entity_key, sequence FROM (
         SELECT *, lead(event_time) OVER (PARTITION BY entity_key ORDER BY sequence::int) AS next_time
           FROM cdc_state WHERE pipeline_version_id = $1) s
        WHERE evict_after IS DISTINCT FROM (CASE WHEN deleted THEN event_time WHEN next_time IS NULL THEN NULL ELSE greatest(event_time, next_time) END)`,
      [runs.keep.pipelineVersionId],
    );
    expect(wrong.rows).toEqual([]);
    // An hour later everything is behind the watermark: one point per live customer (its current version) is left.
    const left = await cdcState(runs.evict.pipelineVersionId);
    expect(left.some((p) => p.deleted)).toBe(false);
    expect(new Set(left.map((p) => p.entity_key)).size).toBe(left.length);

    const [a, b] = await evictedTombstones(runs.keep, runs.evict);
    const cp = await checkpoint(runs.evict.pipelineVersionId);
    await send(topics.scd2, [
      change(a!.customer, a!.version - 1, "U", new Date(a!.at.getTime() - 1000), "chg_after_eviction_older"),
      change(
        b!.customer,
        b!.version + 1,
        "I",
        new Date(cp.watermark.getTime() + 60_000),
        "chg_after_eviction_newer",
      ),
    ]);
    const after = await drainBoth(scd2, SCD2_COLUMNS);
    for (const { progress } of [after.keep, after.evict]) {
      expect(sum(progress, (p) => p.outcomes.late)).toBe(1);
      expect(sum(progress, (p) => p.outcomes.sink)).toBe(1);
    }
    const history = await fx.pool.query(
      `SELECT customer_id, valid_from::int, is_current FROM status_scd2_evict WHERE customer_id = ANY($1) AND valid_from >= $2`,
      [[a!.customer, b!.customer], Math.min(a!.version, b!.version) - 1],
    );
    expect(
      history.rows.filter(
        (r) => r.customer_id === a!.customer && r.valid_from === a!.version - 1 && r.is_current,
      ),
    ).toEqual([]);
    expect(history.rows).toContainEqual({
      customer_id: b!.customer,
      valid_from: b!.version + 1,
      is_current: true,
    });
    await expectExactStateSize(runs.evict.pipelineVersionId);
  });
});
