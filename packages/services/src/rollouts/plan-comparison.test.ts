// What can be compared between two versions' results, and at which grain — decided from the specs alone.
import { ledgerSpec, settlementsSpec } from "@sluice/engine/testing";
import { describe, expect, it } from "vitest";
import { comparisonSql } from "./comparison-sql";
import { compareOutcomes } from "./explain-outcomes";
import { lcm, planComparison, type TComparisonPlan } from "./plan-comparison";
import { sinkShape } from "./sink-shape";

const windows = (
  size: string,
  aggregate: Record<string, unknown> = {},
  overrides: Record<string, unknown> = {},
) =>
  sinkShape(settlementsSpec("payments", "s", "s", { window: { tumbling: size }, ...aggregate }, overrides));
const ledger = (overrides: Record<string, unknown> = {}) => sinkShape(ledgerSpec("payments", overrides));

function comparable(plan: TComparisonPlan) {
  if (!plan.comparable) throw new Error(JSON.stringify(plan.notComparable));
  return plan;
}

function byEventTime(plan: TComparisonPlan) {
  const p = comparable(plan);
  if (p.basis !== "event_time") throw new Error(`compared by ${p.basis}`);
  return p;
}

describe("planComparison: windows", () => {
  it("5- against 10-minute windows: the 10-minute grain, blue rolled up, mergeable measures merged", () => {
    const plan = comparable(planComparison(windows("5m"), windows("10m")));
    expect(plan).toMatchObject({
      basis: "event_time",
      grainMs: 600_000,
      group: ["merchant_id"],
      rollUp: { blue: true, green: false },
    });
    expect(plan.columns).toEqual([
      { name: "events", merge: "sum", numeric: true, additive: true },
      { name: "largest", merge: "max", numeric: true, additive: false },
      { name: "refunded", merge: "sum", numeric: true, additive: true },
      { name: "settled", merge: "sum", numeric: true, additive: true },
    ]);
    expect(plan.notComparable).toEqual([
      {
        what: "measure customers",
        reason:
          "count_distinct cannot be merged from the stored windows (the table keeps the count, not the values): it is compared only when both sides have the same windows and groups",
      },
      {
        what: "measure mean",
        reason:
          "avg cannot be merged from the stored windows (the table keeps the average, not its sum and count): it is compared only when both sides have the same windows and groups",
      },
    ]);
  });

  it("sizes without a common divisor meet at their least common multiple; identical windows compare every measure as is", () => {
    expect(lcm(5 * 60_000, 10 * 60_000)).toBe(600_000);
    expect(lcm(4 * 60_000, 6 * 60_000)).toBe(12 * 60_000);
    expect(comparable(planComparison(windows("4m"), windows("6m")))).toMatchObject({
      grainMs: 720_000,
      rollUp: { blue: true, green: true },
    });
    const same = byEventTime(planComparison(windows("5m"), windows("5m")));
    expect(same.rollUp).toEqual({ blue: false, green: false });
    expect(same.columns.map((c) => c.merge)).toEqual(Array(6).fill("as is"));
    expect(same.notComparable).toEqual([]);
  });

  it("a group-by only one side has is summed away and said; a measure only one side has is said", () => {
    const plan = byEventTime(
      planComparison(
        windows("5m"),
        windows("5m", {
          groupBy: ["merchant_id", "currency"],
          measures: { settled: "sum(amount)", extra: "count()" },
        }),
      ),
    );
    expect(plan.group).toEqual(["merchant_id"]);
    expect(plan.rollUp).toEqual({ blue: false, green: true });
    expect(plan.columns.map((c) => c.name)).toEqual(["settled"]);
    expect(plan.notComparable.map((n) => n.what)).toEqual([
      "group by currency",
      "measure customers",
      "measure events",
      "measure extra",
      "measure largest",
      "measure mean",
      "measure refunded",
    ]);
    expect(plan.notComparable[0]!.reason).toBe(
      "only green groups by currency: its rows are summed over it and compared per merchant_id",
    );
  });

  it("a measure whose function changed is compared as is, but not after a roll-up", () => {
    const changed = { measures: { settled: "max(amount)" } };
    expect(
      comparable(
        planComparison(windows("5m", { measures: { settled: "sum(amount)" } }), windows("5m", changed)),
      ).columns,
    ).toEqual([{ name: "settled", merge: "as is", numeric: true, additive: false }]);
    const rolled = comparable(
      planComparison(windows("5m", { measures: { settled: "sum(amount)" } }), windows("10m", changed)),
    );
    expect(rolled.columns).toEqual([]);
    expect(rolled.notComparable[0]!.reason).toMatch(
      /^blue's is sum\(amount\), green's max\(amount\): different functions/,
    );
  });

  it("sliding windows: compared only against identical ones", () => {
    const sliding = (size: string, slide: string) =>
      sinkShape(
        settlementsSpec("payments", "s", "s", { window: { sliding: { size, slide } }, outputMode: "append" }),
      );
    expect(comparable(planComparison(sliding("10m", "5m"), sliding("10m", "5m")))).toMatchObject({
      grainMs: null,
    });
    const refused = planComparison(sliding("10m", "5m"), windows("5m"));
    expect(refused).toMatchObject({ comparable: false, basis: "event_time" });
    expect(refused.notComparable[0]!.reason).toMatch(
      /^blue's windows are sliding 10m every 5m, green's tumbling 5m: overlapping/,
    );
  });
});

describe("planComparison: rows and what cannot be compared", () => {
  it("ledgers: keyed by the sink key, every common column compared, columns of one side said", () => {
    const plan = comparable(
      planComparison(
        ledger(),
        ledger({
          contract: {
            fields: { event_id: "string", amount: "double", note: "string?", event_time: "timestamp" },
          },
          expectations: [],
        }),
      ),
    );
    expect(plan).toMatchObject({ basis: "offsets", key: ["event_id"], rewritten: false });
    expect(plan.columns).toEqual([
      { name: "amount", merge: "as is", numeric: true, additive: true },
      { name: "event_time", merge: "as is", numeric: false, additive: false },
    ]);
    expect(plan.notComparable.map((n) => `${n.what}: ${n.reason}`)).toContain(
      "column note: only green has it",
    );
    expect(plan.notComparable.map((n) => `${n.what}: ${n.reason}`)).toContain(
      "column currency: only blue has it",
    );
  });

  it("refuses what cannot be lined up: another kind, another topic, another key, a webhook", () => {
    const refusal = (p: TComparisonPlan) => (p.comparable ? "comparable" : p.notComparable[0]!.reason);
    expect(refusal(planComparison(ledger(), windows("5m")))).toBe(
      "blue writes rows (a ledger or CDC table), green event-time windows",
    );
    expect(refusal(planComparison(ledger(), sinkShape(ledgerSpec("refunds"))))).toBe(
      "blue reads topic payments, green refunds: offsets of different topics cannot be lined up",
    );
    expect(
      refusal(planComparison(ledger(), ledger({ sink: { postgres: { table: "l", key: ["payment_id"] } } }))),
    ).toBe("blue's rows are keyed by event_id, green's by payment_id: rows cannot be matched");
    const hook = sinkShape(ledgerSpec("payments", { sink: { webhook: { urlFromEnv: "HOOK_URL" } } }));
    expect(refusal(planComparison(ledger(), hook))).toMatch(/^a webhook sink keeps no table/);
  });
});

describe("comparisonSql", () => {
  it("quotes every identifier and passes every value as a parameter", () => {
    const plan = comparable(planComparison(windows("5m"), windows("10m")));
    const q = comparisonSql({
      plan,
      tables: { blue: `"sink_data"."s__v1"`, green: `"sink_data"."s__v2"` },
      range: { fromTime: null, toTime: new Date("2025-03-01T10:30:00Z"), from: {}, to: { "0": 10 } },
      topic: "payments",
      timestamps: new Set(["window_start"]),
      samples: 20,
      differences: 50,
    });
    expect(q.key).toEqual(["merchant_id", "window_start"]);
    expect(q.summary.text).toContain(`date_bin($1::interval, t.window_start`);
    expect(q.summary.values).toEqual([
      "600000 milliseconds",
      new Date("2025-03-01T10:30:00Z"),
      new Date("2025-03-01T10:30:00Z"),
    ]);
    expect(q.summary.text).toContain(`sum(t."settled")`);
    expect(q.summary.text).not.toContain("2025");
    expect(q.samples.values.slice(-3)).toEqual([20, 20, 50]);
  });
});

describe("compareOutcomes", () => {
  const totals = (metrics: Record<string, number>, read = { "0": { from: 0, to: 100 } }) => ({
    batches: 2,
    firstBatchId: 0,
    lastBatchId: 1,
    read,
    metrics,
  });

  it("says which counts differ, largest difference first; warn violations are what was kept", () => {
    const out = compareOutcomes(
      totals({ input: 100, sink: 90, late: 12, "expectation:known_currency": 3, duplicate: 2 }),
      totals({
        input: 100,
        sink: 86,
        late: 0,
        "dropped:amount_positive": 16,
        "expectation:amount_positive": 16,
        "expectation:known_currency": 3,
        duplicate: 2,
      }),
    );
    expect(out.counted.sameInput).toBe(true);
    expect(out.explanations).toEqual([
      "dropped by expectation `amount_positive` in green: 16 (blue: 0)",
      "late (beyond allowedLateness) in blue: 12 (green: 0)",
      "rows that reached the result in blue: 90 (green: 86)",
    ]);
    expect(out.counts.map((c) => c.metric)).toEqual([
      "input",
      "sink",
      "duplicate",
      "late",
      "dropped:amount_positive",
      "violated:known_currency",
    ]);
  });

  it("different input is said first: the other counts are then close, not exact", () => {
    const out = compareOutcomes(totals({ input: 100 }), totals({ input: 90 }, { "0": { from: 0, to: 90 } }));
    expect(out.counted.sameInput).toBe(false);
    expect(out.explanations[0]).toMatch(
      /^the counted batches read different amounts of input — blue 100, green 90/,
    );
  });
});
