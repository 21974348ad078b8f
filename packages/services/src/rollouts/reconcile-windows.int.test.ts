// Reconciling windowed aggregates built by the real engine over the adversarial settlements topic
// (duplicates, out-of-order and late events, three partitions), over the windows final on both sides:
//   - blue 5-minute windows against green 10-minute ones (the rollout demo's change): compared at
//     10 minutes, the sums, counts, min and max agree; the average and the distinct count are "not
//     comparable" with why; the counts equal the tables' own (SQL over the sink tables);
//   - identical specs: every measure compared as it is, zero differences;
//   - a green with a bug (an expectation that drops valid rows): exactly the (merchant, 10-minute)
//     windows that held such rows differ, by exactly those rows' count and sum (recomputed from the raw
//     events), largest first, and "dropped by expectation `amount_positive` in green" says why;
//   - a green still catching up: only the windows final on both sides, no false "only in blue".
import { loadCheckpoint, PipelineRunner, registerPipelineVersion } from "@sluice/engine";
import {
  createEngineFixture,
  drainPipeline,
  judgedEventsSql,
  loadReferenceBatches,
  loadReferenceEvents,
  settlementsSpec,
  settlementsWorkload,
  type EngineFixture,
} from "@sluice/engine/testing";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { producePayments } from "@sluice/producer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileSinks } from "./reconcile-sinks";
import type { TReconcileSide } from "./reconciliation-report";

const MIN = 60_000;
let fx: EngineFixture;
let blue: TReconcileSide;

function windowed(
  name: string,
  table: string,
  size: string,
  overrides: Record<string, unknown> = {},
): TPipelineSpec {
  return settlementsSpec(
    fx.topic,
    name,
    table,
    { window: { tumbling: size }, outputMode: "update", allowedLateness: "3m" },
    overrides,
  );
}

async function drained(s: TPipelineSpec): Promise<TReconcileSide> {
  const { pipelineVersionId } = await drainPipeline(fx, s);
  return { pipelineVersionId, spec: s, table: { schema: "public", name: s.sink!.postgres!.table } };
}

beforeAll(async () => {
  fx = await createEngineFixture("reconcile-windows");
  await producePayments({ topic: fx.topic, kafka: fx.kafka, ...settlementsWorkload(), log: () => undefined });
  await loadReferenceEvents(fx.pool, fx.kafka, fx.topic);
  blue = await drained(windowed("settlements-5m", "settlements_5m", "5m"));
});
afterAll(() => fx?.close());

/** Blue's 5-minute windows inside the compared range, rolled up to 10 minutes by plain SQL. */
async function blueAt10m(to: string) {
  const res = await fx.pool.query<{ windows: string; buckets: string; merchants: string; settled: string }>(
    `SELECT count(*) AS windows, count(DISTINCT (merchant_id, date_bin('10 minutes', window_start, timestamptz 'epoch'))) AS buckets,
            count(DISTINCT merchant_id) AS merchants, sum(settled)::text AS settled
       FROM settlements_5m WHERE window_end <= $1::timestamptz`,
    [to],
  );
  return res.rows[0]!;
}

describe("reconciling windows over what both have finalized", () => {
  it("5-minute against 10-minute windows: rolled up to 10 minutes they agree; avg and distinct counts are not comparable", async () => {
    const green = await drained(windowed("settlements-10m", "settlements_10m", "10m"));
    const report = await reconcileSinks(fx.pool, { blue, green });
    expect(report.status).toBe("compared");
    expect(report.basis).toBe("event_time");
    expect(report.key).toEqual(["merchant_id", "window_start"]);
    // Final on both sides: the watermark minus allowedLateness (3m), on the 10-minute grain.
    const watermark = (await loadCheckpoint(fx.pool, blue.pipelineVersionId)).watermark!;
    const final = watermark.getTime() - 3 * MIN;
    expect(report.range).toMatchObject({
      basis: "event_time",
      grain: "10m",
      from: null,
      to: new Date(Math.floor(final / (10 * MIN)) * 10 * MIN).toISOString(),
      blueFinalUpTo: new Date(final).toISOString(),
    });
    const to = (report.range as { to: string }).to;
    const expected = await blueAt10m(to);
    expect(Number(expected.buckets)).toBeGreaterThan(30);
    expect(report.counts).toMatchObject({
      blue: {
        rows: Number(expected.windows),
        keys: Number(expected.buckets),
        groups: Number(expected.merchants),
      },
      green: { keys: Number(expected.buckets), groups: Number(expected.merchants) },
      matching: Number(expected.buckets),
      onlyBlue: 0,
      onlyGreen: 0,
      differing: 0,
    });
    expect(report.columns.map((c) => [c.column, c.merge])).toEqual([
      ["events", "sum"],
      ["largest", "max"],
      ["refunded", "sum"],
      ["settled", "sum"],
    ]);
    expect(report.columns.find((c) => c.column === "settled")).toMatchObject({
      differing: 0,
      blueTotal: expected.settled,
      greenTotal: expected.settled,
    });
    expect(report.notComparable.map((n) => n.what)).toEqual(["measure customers", "measure mean"]);
    expect(report.notComparable[1]!.reason).toMatch(/^avg cannot be merged from the stored windows/);
    expect(report.outcomes!.explanations).toEqual([]);
  });

  it("identical specs: every measure compared as it is, no difference", async () => {
    const green = await drained(windowed("settlements-5m-again", "settlements_5m_again", "5m"));
    const report = await reconcileSinks(fx.pool, { blue, green });
    expect(report.notComparable).toEqual([]);
    expect(report.columns.map((c) => c.merge)).toEqual(Array(6).fill("as is"));
    expect(report.counts.differing + report.counts.onlyBlue + report.counts.onlyGreen).toBe(0);
    expect(report.counts.matching).toBe(report.counts.blue.rows);
    expect(report.counts.blue.rows).toBeGreaterThan(50);
  });

  it("a green whose expectation drops valid rows: exactly the affected windows differ, by exactly those rows, explained", async () => {
    const green = await drained(
      windowed("settlements-10m-bug", "settlements_10m_bug", "10m", {
        expectations: [{ name: "amount_positive", expr: "amount > 10", action: "drop" }],
      }),
    );
    const report = await reconcileSinks(fx.pool, { blue, green, differences: 500 });
    const to = (report.range as { to: string }).to;
    // Recomputed from the raw events: the rows blue accepted (deduplicated, not late: the watermark
    // ignores expectations, so both sides judge lateness alike) that green's expectation drops.
    await loadReferenceBatches(fx.pool, [blue.pipelineVersionId]);
    const expected = await fx.pool.query<{
      merchant_id: string;
      window_start: Date;
      events: number;
      settled: string;
    }>(
      `WITH ${judgedEventsSql(2 * MIN)},
       accepted AS (SELECT DISTINCT ON (event_id) * FROM ref_judged
                     WHERE type IN ('settlement', 'refund') AND (prev_watermark IS NULL OR event_time >= prev_watermark - interval '3 minutes')
                     ORDER BY event_id, batch_id)
       SELECT merchant_id, date_bin('10 minutes', event_time, timestamptz 'epoch') AS window_start,
              count(*)::int AS events, sum(amount)::text AS settled
         FROM accepted WHERE amount <= 10 AND date_bin('10 minutes', event_time, timestamptz 'epoch') + interval '10 minutes' <= $1::timestamptz
        GROUP BY 1, 2 ORDER BY 1, 2`,
      [to],
    );
    expect(expected.rows.length).toBeGreaterThan(5);
    const byKey = new Map(expected.rows.map((r) => [`${r.merchant_id}@${r.window_start.toISOString()}`, r]));
    // Windows where every row was dropped are only in blue; the others differ.
    expect(report.counts.differing + report.counts.onlyBlue).toBe(byKey.size);
    expect(report.counts.onlyGreen).toBe(0);
    expect(report.differences).toHaveLength(report.counts.differing);
    for (const d of report.differences) {
      const e = byKey.get(`${d.key.merchant_id}@${d.key.window_start}`)!;
      expect(e).toBeDefined();
      expect(Number(d.columns.find((c) => c.column === "events")!.delta)).toBe(-e.events);
      expect(Number(d.columns.find((c) => c.column === "settled")!.delta)).toBeCloseTo(-Number(e.settled), 6);
    }
    for (const r of report.onlyBlue) expect(byKey.has(`${r.merchant_id}@${r.window_start}`)).toBe(true);
    // Largest first.
    const magnitudes = report.differences.map((d) => Number(d.magnitude));
    expect(magnitudes).toEqual([...magnitudes].sort((a, b) => b - a));
    // Why: all records with amount ≤ 10 (duplicates and late ones included: expectations come first).
    const dropped = await fx.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM ref_events WHERE amount <= 10`,
    );
    expect(report.outcomes!.counts.find((c) => c.metric === "dropped:amount_positive")).toEqual({
      metric: "dropped:amount_positive",
      blue: 0,
      green: Number(dropped.rows[0]!.n),
    });
    expect(report.outcomes!.explanations[0]).toBe(
      `dropped by expectation \`amount_positive\` in green: ${dropped.rows[0]!.n} (blue: 0)`,
    );
  });

  it("a green still catching up: only the windows final on both sides are compared, none only in blue", async () => {
    const s = windowed("settlements-10m-catching-up", "settlements_10m_catching_up", "10m");
    const { pipelineVersionId } = await registerPipelineVersion(fx.pool, s);
    const runner = await PipelineRunner.open(fx.resources, { pipelineVersionId, spec: s, owner: "test" });
    for (let i = 0; i < 4; i++) expect((await runner.runBatch()).kind).toBe("committed");
    await runner.close();
    const green: TReconcileSide = {
      pipelineVersionId,
      spec: s,
      table: { schema: "public", name: "settlements_10m_catching_up" },
    };
    const report = await reconcileSinks(fx.pool, { blue, green });
    const greenWatermark = (await loadCheckpoint(fx.pool, pipelineVersionId)).watermark!;
    const greenFinal = greenWatermark.getTime() - 3 * MIN;
    const to = new Date(Math.floor(greenFinal / (10 * MIN)) * 10 * MIN).toISOString();
    expect(report.range).toMatchObject({ to, greenFinalUpTo: new Date(greenFinal).toISOString() });
    expect(new Date(to).getTime()).toBeLessThan(
      (await loadCheckpoint(fx.pool, blue.pipelineVersionId)).watermark!.getTime() - 3 * MIN - 10 * MIN,
    );
    const expected = await blueAt10m(to);
    expect(Number(expected.buckets)).toBeGreaterThan(5);
    expect(report.counts).toMatchObject({
      blue: { rows: Number(expected.windows), keys: Number(expected.buckets) },
      matching: Number(expected.buckets),
      onlyBlue: 0,
      onlyGreen: 0,
      differing: 0,
    });
  });
});
