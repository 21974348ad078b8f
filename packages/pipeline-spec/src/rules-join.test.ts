import { describe, expect, it } from "vitest";
import { compileSpec, validateSpec, type TSpecError } from "./index";
import { joinedContract, outputViews } from "./output-views";
import { stateCompatibility } from "./state-compatibility";
import { joinedPipelineSpec, joinedSpec, type TLooseSpec } from "./test-specs";

function errorsOf(spec: TLooseSpec): TSpecError[] {
  const result = validateSpec(spec);
  return result.ok ? [] : result.errors;
}

describe("join: a temporal join with a dimension changelog", () => {
  it("accepts the enriched ledger and adds the joined fields, nullable, to the rows after the join", () => {
    const result = validateSpec(joinedSpec());
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(result.spec.join!.onMissing).toBe("deadLetter");
    const contract = joinedContract(result.spec);
    expect(contract.fields.customer_status).toEqual({ type: "string", optional: true });
    expect(contract.fields.customer_version).toEqual({ type: "int", optional: true });
    const [view] = outputViews(result.spec);
    expect(view!.spec.join).toBeUndefined();
    expect(Object.keys(view!.spec.contract.fields)).toContain("customer_risk");
    const compiled = compileSpec(result.spec);
    expect(compiled.timing.join).toEqual({
      waitForMs: 900_000,
      dimensionDelayMs: 600_000,
      dimensionIdleTimeoutMs: 60_000,
    });
    const toCel = compiled.dimension!.toCelRow;
    expect(compiled.dimension!.deleteWhen!.test(toCel({ op: "D" }))).toBe(true);
  });

  it("lets what runs after the join use the joined fields, but not the pipeline's own expectations", () => {
    const spec = joinedSpec();
    spec.sink = { postgres: { table: "suspended_by_status" } };
    spec.aggregate = {
      groupBy: ["merchant_id"],
      measures: {
        risky: "count() if customer_risk > 50",
        suspended: "count() if customer_status == 'suspended'",
      },
    };
    expect(errorsOf(spec)).toEqual([]);
    spec.expectations = [{ name: "known", expr: "customer_status != ''", action: "warn" }];
    expect(errorsOf(spec)).toEqual([
      { path: "expectations[0].expr", message: expect.stringMatching(/unknown field "customer_status"/) },
    ]);
  });

  it("checks the dimension's key, event time, sequence and delete condition against its own contract", () => {
    const spec = joinedSpec();
    const dim = spec.join.dimension;
    dim.key = ["customer"];
    dim.eventTime.column = "version";
    dim.sequenceBy = "risk_score";
    dim.deleteWhen = "op == 1";
    dim.kafka.topic = "payments";
    const errors = errorsOf(spec).map((e) => [e.path, e.message]);
    expect(errors).toEqual(
      expect.arrayContaining([
        [
          "join.dimension.key[0]",
          expect.stringMatching(/"customer" is not a contract field.*join\.dimension\.contract\.fields/),
        ],
        ["join.dimension.eventTime.column", expect.stringMatching(/required timestamp/)],
        ["join.dimension.sequenceBy", expect.stringMatching(/required int/)],
        ["join.dimension.deleteWhen", expect.stringMatching(/no such overload/)],
        ["join.dimension.kafka.topic", expect.stringMatching(/its own changelog topic/)],
      ]),
    );
  });

  it("needs on to map every dimension key field with the same type, and fields not to shadow the row's", () => {
    const spec = joinedSpec();
    spec.join.on = { seq: "customer_id" };
    spec.join.fields = { amount: "status", customer_tier: "tier" };
    const errors = errorsOf(spec).map((e) => [e.path, e.message]);
    expect(errors).toEqual(
      expect.arrayContaining([
        ["join.on.seq", expect.stringMatching(/seq is int and the dimension's customer_id is string/)],
        ["join.fields.amount", expect.stringMatching(/already a field of the row/)],
        ["join.fields.customer_tier", expect.stringMatching(/"tier" is not a contract field/)],
      ]),
    );
    const partial = joinedSpec();
    partial.join.dimension.key = ["customer_id", "version"];
    expect(errorsOf(partial)).toContainEqual({
      path: "join.on",
      message: expect.stringMatching(/version is not mapped/),
    });
  });

  it("needs the row's event time, and a duration for waitFor", () => {
    const spec = joinedSpec();
    delete spec.eventTime;
    delete spec.dedupe;
    expect(errorsOf(spec)).toEqual([{ path: "join", message: expect.stringMatching(/declare eventTime/) }]);
    const bad = joinedSpec();
    bad.join.waitFor = "soon";
    bad.join.onMissing = "drop";
    expect(errorsOf(bad).map((e) => e.path)).toEqual(["join.waitFor", "join.onMissing"]);
  });
});

describe("join: a dimension that is another pipeline's SCD2 history", () => {
  it("accepts it with the fields it reads declared, no changelog timing, and the fields typed from them", () => {
    const result = validateSpec(joinedPipelineSpec());
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(joinedContract(result.spec).fields.customer_risk).toEqual({ type: "int", optional: true });
    const compiled = compileSpec(result.spec);
    expect(compiled.dimension).toBeUndefined();
    expect(compiled.timing.join).toEqual({
      waitForMs: 900_000,
      dimensionDelayMs: 0,
      dimensionIdleTimeoutMs: 0,
    });
  });

  it("reports the form the dimension nearly is, its key against `on`, and itself as its dimension", () => {
    const typo = joinedPipelineSpec();
    typo.join.dimension.pipline = "customer-status";
    delete typo.join.dimension.pipeline;
    expect(errorsOf(typo)).toEqual([
      { path: "join.dimension.pipeline", message: "required field is missing" },
      { path: "join.dimension.pipline", message: 'unknown field "pipline": did you mean "pipeline"?' },
    ]);
    const badTopic = joinedSpec();
    delete badTopic.join.dimension.eventTime;
    expect(errorsOf(badTopic)).toEqual([
      { path: "join.dimension.eventTime", message: "required field is missing" },
    ]);
    const key = joinedPipelineSpec();
    key.join.dimension.key = ["customer_id", "version"];
    expect(errorsOf(key)).toContainEqual({
      path: "join.on",
      message: expect.stringMatching(/version is not mapped/),
    });
    const self = joinedPipelineSpec();
    self.join.dimension.pipeline = self.name;
    expect(errorsOf(self)).toEqual([
      { path: "join.dimension.pipeline", message: expect.stringMatching(/cannot be its own dimension/) },
    ]);
  });

  it("a new version continues the waiting rows only with the same dimension", () => {
    const valid = (s: TLooseSpec) => {
      const r = validateSpec(s);
      if (!r.ok) throw new Error(JSON.stringify(r.errors));
      return r.spec;
    };
    const other = joinedPipelineSpec();
    other.join.dimension.pipeline = "customer-tiers";
    const problems = (a: TLooseSpec, b: TLooseSpec) =>
      stateCompatibility(valid(a), valid(b)).problems.map((p) => [p.state, p.reason]);
    expect(problems(joinedPipelineSpec(), other)).toEqual([
      ["join", expect.stringMatching(/read from pipeline customer-status/)],
    ]);
    expect(problems(joinedSpec(), joinedPipelineSpec())).toEqual([
      ["join", expect.stringMatching(/read from customer-changes/)],
    ]);
    const more = joinedPipelineSpec();
    more.join.fields.customer_seen = "version";
    expect(problems(joinedPipelineSpec(), more)).toEqual([]);
  });
});
