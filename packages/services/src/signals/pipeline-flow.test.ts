import { describe, expect, it } from "vitest";
import { pipelineFlow, ZFlowSpec, type TFlowTotals } from "./pipeline-flow";

const totals = (over: Partial<TFlowTotals> = {}): TFlowTotals => ({
  inputRows: 100,
  sink: 70,
  duplicate: 10,
  filtered: 5,
  quarantined: 4,
  deadLetter: 3,
  late: 2,
  stale: 0,
  droppedBy: { positive_amount: 6 },
  violations: { positive_amount: 6, known_currency: 9 },
  unbalancedBatches: 0,
  ...over,
});
const spec = ZFlowSpec.parse({
  source: { kafka: { topic: "payments" } },
  expectations: [
    { name: "positive_amount", action: "drop" },
    { name: "known_currency", action: "warn" },
  ],
  transform: { filter: "type == 'settlement'" },
  eventTime: { column: "event_time" },
  dedupe: { key: ["event_id"] },
  sink: { postgres: { table: "ledger" } },
});

describe("the pipeline graph", () => {
  it("follows the engine's phases; each branch leaves the main line; input = sink + branches", () => {
    const f = pipelineFlow(spec, totals());
    expect(f.nodes.filter((n) => n.kind !== "branch").map((n) => n.id)).toEqual([
      "source",
      "decode",
      "contract",
      "expectations",
      "filter",
      "late",
      "dedup",
      "sink",
    ]);
    expect(f.edges.filter((e) => !e.leaves).map((e) => e.rows)).toEqual([100, 97, 93, 87, 82, 80, 70]);
    expect(f).toMatchObject({
      input: 100,
      outcomes: 100,
      balanced: true,
      warnings: [{ name: "known_currency", rows: 9 }],
    });
  });

  it("says so when the counts do not add up, or a batch in the range did not balance", () => {
    expect(pipelineFlow(spec, totals({ sink: 69 })).balanced).toBe(false);
    expect(pipelineFlow(spec, totals({ unbalancedBatches: 1 })).balanced).toBe(false);
  });

  it("rows dropped by an expectation the spec no longer has still show as a branch", () => {
    const f = pipelineFlow(
      ZFlowSpec.parse({}),
      totals({ droppedBy: { old_rule: 6 }, filtered: 0, sink: 75 }),
    );
    expect(f.edges.find((e) => e.to === "expectations:dropped:old_rule")?.rows).toBe(6);
    expect(f.balanced).toBe(true);
  });

  it("a join is a phase after dedup, its rows waiting for the dimension beside it, outside the balance", () => {
    const joined = ZFlowSpec.parse({
      ...spec,
      join: { dimension: { kafka: { topic: "customer-changes" } }, waitFor: "15m" },
    });
    const f = pipelineFlow(joined, totals(), { joinWaiting: { rows: 12, bytes: 3400 } });
    expect(f.nodes.filter((n) => n.kind === "phase").map((n) => n.id)).toEqual([
      "decode",
      "contract",
      "expectations",
      "filter",
      "late",
      "dedup",
      "join",
    ]);
    expect(f.nodes.find((n) => n.id === "join")?.detail).toBe(
      "customer-changes as of event time, waits ≤ 15m",
    );
    expect(f.nodes.find((n) => n.id === "join:waiting")).toMatchObject({
      kind: "state",
      label: "waiting for dimension",
      detail: "12 rows now",
    });
    expect(f.edges.find((e) => e.to === "join:waiting")).toEqual({
      from: "join",
      to: "join:waiting",
      rows: 12,
      leaves: false,
      state: true,
    });
    expect(f.edges.find((e) => e.to === "sink")).toMatchObject({ from: "join", rows: 70 });
    expect(f.balanced).toBe(true);
    // Without a checkpoint yet: nothing waiting.
    expect(pipelineFlow(joined, totals()).edges.find((e) => e.to === "join:waiting")?.rows).toBe(0);
  });

  it("several outputs: the sink names each output's table", () => {
    const f = pipelineFlow(
      ZFlowSpec.parse({
        ...spec,
        sink: undefined,
        outputs: {
          fraud: { sink: { postgres: { table: "merchant_fraud_5m" } } },
          finance: { sink: { postgres: { table: "merchant_finance_5m" } } },
        },
      }),
      totals(),
    );
    expect(f.nodes.find((n) => n.id === "sink")).toMatchObject({
      label: "Outputs (2)",
      detail: "fraud → merchant_fraud_5m, finance → merchant_finance_5m",
    });
  });
});
