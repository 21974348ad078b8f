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

  // Over the range, the batches counted 70 rows `sink` and 3 dead letters; the join's reports over the
  // same batches: 40 joined, 5 at the bound, 2 missing (written: 47), 4 dimension_missing dead letters
  // (1 of this range's rows at once — in the batches' 3 dead letters — and 3 that had been waiting),
  // 30 rows started waiting and 10 waiting ones were released. Rows into the join: 70 + 1 = 71 =
  // 47 written + 4 dead letters + (30 − 10) left waiting.
  const joinTotals = {
    joined: 40,
    joinedAtBound: 5,
    missing: 2,
    deadLettered: 4,
    held: 30,
    released: 10,
    sink: 70,
  };
  const joined = ZFlowSpec.parse({
    ...spec,
    join: { dimension: { kafka: { topic: "customer-changes" } }, waitFor: "15m" },
  });

  it("a join is a phase after dedup; the sink gets what it wrote, waiting rows and its dead letters beside it", () => {
    const f = pipelineFlow(joined, totals(), { joinWaiting: { rows: 12, bytes: 3400 }, join: joinTotals });
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
    // What is held now is the node's, for the page to format; the edge is the range's net change.
    expect(f.nodes.find((n) => n.id === "join:waiting")).toMatchObject({
      kind: "state",
      label: "waiting for dimension",
      detail: null,
      holds: { rows: 12, bytes: 3400 },
    });
    const edge = (to: string) => f.edges.find((e) => e.to === to)!;
    expect(edge("join:waiting")).toEqual({
      from: "join",
      to: "join:waiting",
      rows: 20,
      leaves: false,
      state: true,
    });
    // The join's dead letters are named for what they are, and leave at the join, not at decode.
    expect(f.nodes.find((n) => n.id === "join:dead-letter")?.label).toBe("dead letter (dimension missing)");
    expect(edge("join:dead-letter")).toMatchObject({ from: "join", rows: 4, leaves: true });
    expect(f.nodes.find((n) => n.id === "decode:dead-letter")?.label).toBe("dead letter (undecodable)");
    expect(edge("decode:dead-letter").rows).toBe(2);
    // Into the join: the batches' sink rows and its in-batch dead letter; into the sink: what it wrote.
    expect(edge("join")).toMatchObject({ from: "dedup", rows: 71 });
    expect(edge("sink")).toMatchObject({ from: "join", rows: 47 });
    // The numbers add up: input = sink + every branch + net waiting, and at the join in = out.
    const branches = f.edges.filter((e) => e.leaves).reduce((n, e) => n + e.rows, 0);
    expect(47 + branches + 20).toBe(100);
    expect(edge("join:dead-letter").rows + edge("join:waiting").rows + edge("sink").rows).toBe(
      edge("join").rows,
    );
    expect(f).toMatchObject({ input: 100, outcomes: 100, waiting: 20, balanced: true });
  });

  it("a join that released more rows than started waiting: the net is negative, the sums still hold", () => {
    const f = pipelineFlow(joined, totals(), {
      joinWaiting: { rows: 0, bytes: 0 },
      join: { ...joinTotals, joined: 60, held: 0, released: 10, deadLettered: 1 },
    });
    // 71 in + 10 released = 67 written + 1 dead letter + 0 held... written 67, waiting −10.
    expect(f.edges.find((e) => e.to === "sink")?.rows).toBe(67);
    expect(f.edges.find((e) => e.to === "join:waiting")?.rows).toBe(-10);
    expect(f.balanced).toBe(true);
  });

  it("the join's counts and the batches' disagree: not balanced", () => {
    const f = pipelineFlow(joined, totals(), {
      joinWaiting: null,
      join: { ...joinTotals, sink: 70, joined: 41 },
    });
    // One more written than the batches handed over: the in-batch dead letters would be 2 of 3.
    expect(f.edges.find((e) => e.to === "decode:dead-letter")?.rows).toBe(1);
    expect(f.outcomes).toBe(100);
    expect(pipelineFlow(joined, totals({ sink: 69 }), { joinWaiting: null, join: joinTotals }).balanced).toBe(
      false,
    );
    // Without a batch of the join in the range: nothing written, nothing waiting.
    const none = pipelineFlow(joined, totals({ sink: 0, inputRows: 30 }));
    expect(none.edges.find((e) => e.to === "join:waiting")?.rows).toBe(0);
    expect(none.nodes.find((n) => n.id === "join:waiting")?.holds).toEqual({ rows: 0, bytes: 0 });
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
