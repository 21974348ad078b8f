import { describe, expect, it } from "vitest";
import { outputContinuations, stateCompatibility } from "./state-compatibility";
import { joinedSpec, splitSpec, type TLooseSpec } from "./test-specs";
import { validateSpec } from "./validate-spec";

function valid(spec: TLooseSpec) {
  const result = validateSpec(spec);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.spec;
}
const compare = (a: TLooseSpec, b: TLooseSpec) => stateCompatibility(valid(a), valid(b));

describe("stateCompatibility of several outputs: decided per output", () => {
  it("continues every output when nothing that shapes state changed", () => {
    const next = splitSpec();
    next.outputs.fraud.expectations = [{ name: "big", expr: "amount < 10000.0", action: "drop" }];
    next.outputs.finance.watermarkDelay = "20m";
    expect(compare(splitSpec(), next)).toMatchObject({ compatible: true, problems: [] });
  });

  it("refuses the output whose windows changed, naming it, and continues the other", () => {
    const next = splitSpec();
    next.outputs.finance.aggregate.window = { tumbling: "10m" };
    next.outputs.fraud.aggregate.allowedLateness = "30m";
    const result = compare(splitSpec(), next);
    expect(result.problems.map((p) => [p.state, p.path])).toEqual([
      ["window", "outputs.finance.aggregate.window.tumbling"],
      ["window", "outputs.fraud.aggregate.allowedLateness"],
    ]);
    expect(result.problems[0]!.reason).toMatch(
      /^outputs\.finance\.aggregate\.window\.tumbling changed from 5m to 10m: /,
    );
  });

  it("notes an added output (it starts empty) and a removed one (its state goes)", () => {
    const next = splitSpec();
    next.outputs.audit = { sink: { postgres: { table: "payments_audit" } } };
    delete next.outputs.fraud;
    const result = compare(splitSpec(), next);
    expect(result.compatible).toBe(true);
    expect(result.notes.map((n) => n.path).sort()).toEqual(["outputs.audit", "outputs.fraud"]);
    expect(outputContinuations(valid(splitSpec()), valid(next))).toEqual([
      { from: "finance", to: "finance" },
    ]);
  });

  it("keeps a one-sink pipeline's state in the output that writes the same table", () => {
    const before = splitSpec();
    const { fraud } = before.outputs;
    delete before.outputs;
    before.aggregate = fraud.aggregate;
    before.sink = fraud.sink;
    expect(outputContinuations(valid(before), valid(splitSpec()))).toEqual([{ from: "", to: "fraud" }]);
    expect(compare(before, splitSpec()).compatible).toBe(true);
  });
});

describe("stateCompatibility of a join", () => {
  it("continues through changes to waitFor, onMissing and the enriched fields", () => {
    const next = joinedSpec();
    next.join.waitFor = "1h";
    next.join.onMissing = "emit";
    next.join.fields = { customer_status: "status" };
    expect(compare(joinedSpec(), next)).toMatchObject({ compatible: true });
  });

  it("refuses a changed dimension topic, key or event time, or rows matched on other fields", () => {
    const topic = joinedSpec();
    topic.join.dimension.kafka.topic = "customers-v2";
    expect(compare(joinedSpec(), topic).problems.map((p) => p.path)).toEqual(["join.dimension.kafka.topic"]);
    const time = joinedSpec();
    time.join.dimension.contract.fields.updated_at = "timestamp";
    time.join.dimension.eventTime.column = "updated_at";
    const result = compare(joinedSpec(), time);
    expect(result.problems.map((p) => p.path)).toEqual(["join.dimension.eventTime.column"]);
    expect(result.notes.map((n) => n.path)).toEqual(["join.dimension.contract.fields.updated_at"]);
  });

  it("notes a join added to a running ledger", () => {
    const before = joinedSpec();
    delete before.join;
    const result = compare(before, joinedSpec());
    expect(result.notes.map((n) => [n.state, n.path])).toContainEqual(["join", "join"]);
  });
});
