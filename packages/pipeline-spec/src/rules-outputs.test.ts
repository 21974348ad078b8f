import { describe, expect, it } from "vitest";
import { validateSpec, type TSpecError } from "./index";
import { outputViews } from "./output-views";
import { splitSpec, type TLooseSpec } from "./test-specs";

function errorsOf(spec: TLooseSpec): TSpecError[] {
  const result = validateSpec(spec);
  return result.ok ? [] : result.errors;
}

describe("outputs: several results from one read", () => {
  it("accepts two outputs with their own lateness and resolves each output's sink", () => {
    const result = validateSpec(splitSpec());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.spec.sink).toBeUndefined();
    expect(result.spec.outputs!.fraud!.sink.postgres).toEqual({
      table: "merchant_fraud_5m",
      mode: "upsert",
      key: ["merchant_id", "window_start"],
    });
    // finance writes each window once, when final: an append table.
    expect(result.spec.outputs!.finance!.sink.postgres!.mode).toBe("append");
  });

  it("gives each output a view: its own sections over the pipeline's, its own watermark delay", () => {
    const result = validateSpec(splitSpec());
    if (!result.ok) throw new Error("invalid");
    const views = outputViews(result.spec);
    expect(views.map((v) => v.name)).toEqual(["finance", "fraud"]);
    const [finance, fraud] = views.map((v) => v.spec);
    expect(finance!.eventTime!.watermarkDelay).toBe("10m");
    expect(fraud!.eventTime!.watermarkDelay).toBe("10m");
    expect(fraud!.aggregate!.allowedLateness).toBe("20m");
    expect(finance!.aggregate!.allowedLateness).toBe("2d");
    expect(fraud!.expectations).toEqual([]);
    expect(fraud!.dedupe).toEqual(result.spec.dedupe);
  });

  it("treats a spec with a top-level sink as one output named ''", () => {
    const spec = splitSpec();
    delete spec.outputs;
    spec.sink = { postgres: { table: "payments_ledger" } };
    const result = validateSpec(spec);
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(outputViews(result.spec).map((v) => [v.name, v.spec.sink.postgres?.table])).toEqual([
      ["", "payments_ledger"],
    ]);
  });

  it("refuses sink and outputs together, and neither", () => {
    const both = splitSpec();
    both.sink = { postgres: { table: "x" } };
    expect(errorsOf(both)).toContainEqual({
      path: "sink",
      message: expect.stringMatching(/either sink .* or outputs/),
    });
    const neither = splitSpec();
    delete neither.outputs;
    expect(errorsOf(neither)).toContainEqual({
      path: "sink",
      message: expect.stringMatching(/required field is missing/),
    });
  });

  it("says where a top-level aggregate or select goes with outputs", () => {
    const spec = splitSpec();
    spec.aggregate = { groupBy: ["merchant_id"], measures: { n: "count()" } };
    spec.transform = { ...spec.transform, select: ["event_id"] };
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({
      path: "aggregate",
      message: expect.stringMatching(/move aggregate under outputs/),
    });
    expect(errors).toContainEqual({
      path: "transform.select",
      message: expect.stringMatching(/outputs.<name>.transform/),
    });
  });

  it("checks each output like a one-sink pipeline, reporting under outputs.<name>", () => {
    const spec = splitSpec();
    spec.outputs.fraud.aggregate.groupBy = ["merchant"];
    spec.outputs.finance.sink.postgres.mode = "append";
    spec.outputs.finance.aggregate.outputMode = "update";
    spec.outputs.finance.expectations = [{ name: "big", expr: "amount > 'x'", action: "drop" }];
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({
      path: "outputs.fraud.aggregate.groupBy[0]",
      message: expect.stringMatching(/"merchant" is not a contract field/),
    });
    expect(errors).toContainEqual({
      path: "outputs.finance.sink.postgres.mode",
      message: expect.stringMatching(/use mode: upsert/),
    });
    expect(errors).toContainEqual({
      path: "outputs.finance.expectations[0].expr",
      message: expect.stringMatching(/no such overload/),
    });
  });

  it("refuses bad output names, two outputs on one table and two webhooks", () => {
    const spec = splitSpec();
    spec.outputs["Bad-Name"] = spec.outputs.fraud;
    spec.outputs.finance.sink = { postgres: { table: "merchant_fraud_5m" } };
    const errors = errorsOf(spec);
    expect(errors).toContainEqual({
      path: 'outputs["Bad-Name"]',
      message: expect.stringMatching(/not a valid output name/),
    });
    expect(errors).toContainEqual({
      path: "outputs.finance.sink.postgres.table",
      message: expect.stringMatching(/outputs fraud and finance both write merchant_fraud_5m/),
    });
    const hooks = splitSpec();
    const hook = {
      webhook: { url: "https://hooks.example.com/a", idempotencyKey: ["merchant_id", "window_start"] },
    };
    for (const o of ["fraud", "finance"]) {
      hooks.outputs[o].aggregate.outputMode = "append";
      hooks.outputs[o].sink = hook;
    }
    expect(errorsOf(hooks)).toContainEqual({
      path: "outputs.finance.sink.webhook",
      message: expect.stringMatching(/at most one webhook output/),
    });
  });

  it("reports an output's unknown key with a suggestion", () => {
    const spec = splitSpec();
    spec.outputs.fraud.watermarkDelayy = "1m";
    expect(errorsOf(spec)[0]).toMatchObject({ path: "outputs.fraud.watermarkDelayy" });
  });
});
