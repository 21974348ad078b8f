// Reconciling two ledgers (blue, green) built by the real engine over one adversarial topic (duplicates,
// out-of-order and late events on three partitions), compared over the offsets both have read:
//   - identical specs: every key matches, nothing only on one side, the outcome counts equal;
//   - a green with a bug (a filter that drops refunds): exactly blue's refund rows are "only in blue"
//     (checked against the table itself), and the outcome counts say "filtered out in green";
//   - values that differ are listed largest first, with the columns and deltas, text after numbers;
//   - a green still catching up is compared over the offsets it has read only: nothing "only in blue",
//     blue's rows counted are exactly those below green's offsets;
//   - the stored report is the latest one, and a run again adds a row.
import { loadCheckpoint, PipelineRunner, registerPipelineVersion } from "@sluice/engine";
import { createEngineFixture, drainPipeline, ledgerSpec, type EngineFixture } from "@sluice/engine/testing";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { producePayments } from "@sluice/producer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findLatestReconciliation } from "./find-latest-reconciliation";
import { reconcileSinks } from "./reconcile-sinks";
import type { TReconcileSide } from "./reconciliation-report";
import { runReconciliation } from "./run-reconciliation";

let fx: EngineFixture;
let blue: TReconcileSide;

function spec(name: string, table: string, overrides: Record<string, unknown> = {}): TPipelineSpec {
  return ledgerSpec(fx.topic, { name, sink: { postgres: { table } }, ...overrides });
}

async function drained(
  name: string,
  table: string,
  overrides: Record<string, unknown> = {},
): Promise<TReconcileSide> {
  const s = spec(name, table, overrides);
  const { pipelineVersionId } = await drainPipeline(fx, s);
  return { pipelineVersionId, spec: s, table: { schema: "public", name: table } };
}

async function count(sql: string, values: unknown[] = []): Promise<number> {
  return Number((await fx.pool.query<{ n: string }>(sql, values)).rows[0]!.n);
}

beforeAll(async () => {
  fx = await createEngineFixture("reconcile-ledgers");
  await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: 4000,
    partitions: 3,
    seed: 77,
    duplicateShare: 0.06,
    outOfOrderShare: 0.1,
    lateShare: 0.05,
    log: () => undefined,
  });
  blue = await drained("ledger-blue", "ledger_blue");
});
afterAll(() => fx?.close());

describe("reconciling two ledgers over the offsets both have read", () => {
  it("identical specs: every key matches, nothing only on one side, equal outcome counts", async () => {
    const green = await drained("ledger-green", "ledger_green");
    const report = await reconcileSinks(fx.pool, { blue, green });
    const rows = await count(`SELECT count(*) AS n FROM ledger_blue`);
    expect(rows).toBeGreaterThan(3000);
    expect(report.status).toBe("compared");
    expect(report.basis).toBe("offsets");
    expect(report.key).toEqual(["event_id"]);
    expect(report.counts).toMatchObject({
      blue: { rows, keys: rows },
      green: { rows, keys: rows },
      matching: rows,
      onlyBlue: 0,
      onlyGreen: 0,
      differing: 0,
      laterOnOtherSide: 0,
    });
    expect(report.onlyBlue).toEqual([]);
    expect(report.differences).toEqual([]);
    // The range is each partition up to the checkpoint both reached (the topic's end).
    const end = (await loadCheckpoint(fx.pool, blue.pipelineVersionId)).endOffsets;
    expect(report.range).toMatchObject({ basis: "offsets", topic: fx.topic });
    expect(
      Object.fromEntries(
        (report.range as { partitions: { partition: number; to: number }[] }).partitions.map((p) => [
          String(p.partition),
          p.to,
        ]),
      ),
    ).toEqual(end);
    // Same input, same outcomes: duplicates were seen (and are equal), nothing to explain.
    expect(report.outcomes!.counted.sameInput).toBe(true);
    expect(report.outcomes!.explanations).toEqual([]);
    const duplicate = report.outcomes!.counts.find((c) => c.metric === "duplicate")!;
    expect(duplicate.blue).toBeGreaterThan(0);
    expect(duplicate.green).toBe(duplicate.blue);
    expect(report.outcomes!.counts.find((c) => c.metric === "sink")).toEqual({
      metric: "sink",
      blue: rows,
      green: rows,
    });
    // The amounts' totals agree to the cent with the table's own sum.
    const total = (await fx.pool.query<{ t: string }>(`SELECT sum(amount)::text AS t FROM ledger_blue`))
      .rows[0]!.t;
    expect(report.columns.find((c) => c.column === "amount")).toMatchObject({
      differing: 0,
      blueTotal: total,
      greenTotal: total,
    });
  });

  it("a green whose filter drops refunds: exactly blue's refunds are only in blue, explained by 'filtered out in green'", async () => {
    const green = await drained("ledger-norefunds", "ledger_norefunds", {
      transform: { filter: "type != 'refund'" },
    });
    const report = await reconcileSinks(fx.pool, { blue, green, samples: 200 });
    const refunds = (
      await fx.pool.query<{ event_id: string }>(
        `SELECT event_id FROM ledger_blue WHERE type = 'refund' ORDER BY event_id`,
      )
    ).rows.map((r) => r.event_id);
    expect(refunds.length).toBeGreaterThan(20);
    expect(report.counts.onlyBlue).toBe(refunds.length);
    expect(report.counts.onlyGreen).toBe(0);
    expect(report.counts.differing).toBe(0);
    // The sample is the first keys in order, each a refund row of blue with its values.
    expect(report.onlyBlue.map((r) => r.event_id)).toEqual(refunds.slice(0, 200));
    expect(new Set(report.onlyBlue.map((r) => r.type))).toEqual(new Set(["refund"]));
    // Why: green filtered them (all copies of every refund, duplicates included); blue filtered nothing.
    const refundRecords = await count(
      `SELECT count(*) AS n FROM (SELECT DISTINCT _partition, _offset FROM ledger_blue WHERE type = 'refund') r`,
    );
    const filtered = report.outcomes!.counts.find((c) => c.metric === "filtered")!;
    expect(filtered.blue).toBe(0);
    expect(filtered.green).toBeGreaterThanOrEqual(refundRecords);
    expect(report.outcomes!.explanations).toContain(`filtered out in green: ${filtered.green} (blue: 0)`);
    expect(report.outcomes!.explanations).toContain(
      `rows that reached the result in blue: ${report.outcomes!.counts.find((c) => c.metric === "sink")!.blue} (green: ${report.outcomes!.counts.find((c) => c.metric === "sink")!.green})`,
    );
  });

  it("differing values are listed largest first, with each column's values and delta", async () => {
    const green = await drained("ledger-values", "ledger_values");
    // A ledger's values come from its input, so nothing in the engine makes two versions' amounts
    // differ; a green that did (a bug in a new version's code) is stood in for by changing its rows.
    const ids = (
      await fx.pool.query<{ event_id: string }>(
        `SELECT event_id FROM ledger_values ORDER BY event_id LIMIT 4`,
      )
    ).rows.map((r) => r.event_id);
    await fx.pool.query(`UPDATE ledger_values SET amount = amount + 5 WHERE event_id = $1`, [ids[0]]);
    await fx.pool.query(`UPDATE ledger_values SET amount = amount - 500 WHERE event_id = $1`, [ids[1]]);
    await fx.pool.query(
      `UPDATE ledger_values SET amount = amount + 50, currency = 'XXX' WHERE event_id = $1`,
      [ids[2]],
    );
    await fx.pool.query(`UPDATE ledger_values SET currency = 'XXX' WHERE event_id = $1`, [ids[3]]);
    const report = await reconcileSinks(fx.pool, { blue, green });
    expect(report.counts.differing).toBe(4);
    expect(report.counts.onlyBlue + report.counts.onlyGreen).toBe(0);
    expect(report.differences.map((d) => [d.key.event_id, Number(d.magnitude ?? NaN)])).toEqual([
      [ids[1], 500],
      [ids[2], 50],
      [ids[0], 5],
      [ids[3], NaN], // no number differs: after every numeric difference
    ]);
    const blueAmount = (
      await fx.pool.query<{ a: string }>(`SELECT amount::text AS a FROM ledger_blue WHERE event_id = $1`, [
        ids[1],
      ])
    ).rows[0]!.a;
    expect(report.differences[0]!.columns).toEqual([
      { column: "amount", blue: blueAmount, green: (Number(blueAmount) - 500).toFixed(2), delta: "-500.00" },
    ]);
    expect(report.differences[1]!.columns.map((c) => c.column)).toEqual(["amount", "currency"]);
    expect(report.differences[3]!.columns).toEqual([
      { column: "currency", blue: expect.any(String), green: "XXX", delta: null },
    ]);
    expect(report.columns.find((c) => c.column === "amount")!.differing).toBe(3);
    expect(report.columns.find((c) => c.column === "currency")!.differing).toBe(2);
    const totals = report.columns.find((c) => c.column === "amount")!;
    expect(Number(totals.greenTotal) - Number(totals.blueTotal)).toBeCloseTo(-445, 6);
  });

  it("a green still catching up is compared over the offsets it has read: nothing only in blue", async () => {
    const s = spec("ledger-catching-up", "ledger_catching_up", {
      source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 300 } },
    });
    const { pipelineVersionId } = await registerPipelineVersion(fx.pool, s);
    const runner = await PipelineRunner.open(fx.resources, {
      pipelineVersionId,
      spec: s,
      owner: "test",
      readAhead: false,
    });
    for (let i = 0; i < 3; i++) expect((await runner.runBatch()).kind).toBe("committed");
    await runner.close();
    const green: TReconcileSide = {
      pipelineVersionId,
      spec: s,
      table: { schema: "public", name: "ledger_catching_up" },
    };
    const greenEnd = (await loadCheckpoint(fx.pool, pipelineVersionId)).endOffsets;
    const report = await reconcileSinks(fx.pool, { blue, green });
    expect(report.status).toBe("compared");
    expect(report.counts.onlyBlue).toBe(0);
    expect(report.counts.onlyGreen).toBe(0);
    expect(report.counts.differing).toBe(0);
    // Blue's rows counted are exactly those below green's offsets; green's are all of its rows.
    const blueInRange = await count(
      `SELECT count(*) AS n FROM ledger_blue b JOIN jsonb_each_text($1::jsonb) e ON e.key::int = b._partition WHERE b._offset < e.value::bigint`,
      [JSON.stringify(greenEnd)],
    );
    const greenRows = await count(`SELECT count(*) AS n FROM ledger_catching_up`);
    expect(greenRows).toBeGreaterThan(500);
    expect(report.counts.blue.rows).toBe(blueInRange);
    expect(report.counts.green.rows).toBe(greenRows);
    expect(report.counts.matching + report.counts.laterOnOtherSide).toBe(greenRows);
    // The outcome counts cover the batches that read inside the common offsets: green's three, and
    // blue's first (2000 offsets, straddling green's 900) whole — said, not hidden.
    expect(report.outcomes!.counted.green.batches).toBe(3);
    expect(report.outcomes!.counted.blue).toMatchObject({ batches: 1, lastBatchId: 0 });
    expect(report.outcomes!.counted.sameInput).toBe(false);
    expect(report.outcomes!.explanations[0]).toMatch(
      /^the counted batches read different amounts of input — blue 2000, green 900/,
    );
  });

  it("stores each run; the latest is read back, and a green that has committed nothing yet is 'waiting'", async () => {
    const never = spec("ledger-not-started", "ledger_not_started");
    const { pipelineVersionId } = await registerPipelineVersion(fx.pool, never);
    const green: TReconcileSide = {
      pipelineVersionId,
      spec: never,
      table: { schema: "public", name: "ledger_not_started" },
    };
    const who = { actorUserId: null, actor: "operator@sluice.local" };
    const first = await runReconciliation(fx.pool, { blue, green }, who);
    expect(first.status).toBe("waiting");
    // Registration made green's (empty) table; nothing is committed on its side, so no range yet.
    expect(first.report!.notComparable).toContainEqual(expect.objectContaining({ what: "range" }));
    expect(await findLatestReconciliation(fx.pool, blue.pipelineVersionId, pipelineVersionId)).toMatchObject({
      id: first.id,
      status: "waiting",
    });

    await drainPipeline(fx, never);
    const second = await runReconciliation(fx.pool, { blue, green }, who);
    expect(second).toMatchObject({ status: "compared", onlyBlue: 0, onlyGreen: 0, differing: 0 });
    const latest = await findLatestReconciliation(fx.pool, blue.pipelineVersionId, pipelineVersionId);
    expect(latest).toMatchObject({
      id: second.id,
      status: "compared",
      requestedBy: "operator@sluice.local",
      onlyBlue: 0,
    });
    expect(latest!.report!.counts.matching).toBe(second.report!.counts.matching);
    expect(await findLatestReconciliation(fx.pool, pipelineVersionId, blue.pipelineVersionId)).toBeNull();
  });
});
