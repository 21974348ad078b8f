// Which results of two versions a rollout reconciles: each output both write, each side on its own
// physical table; the rest skipped with why.
import { settlementsSpec, settlementViewsSpec } from "@sluice/engine/testing";
import { describe, expect, it } from "vitest";
import { rolloutOutputs } from "./rollout-outputs";

const one = (table: string) =>
  settlementsSpec("payments", "settlements", table, { window: { tumbling: "5m" } });
const views = () =>
  settlementViewsSpec("payments", "settlements", {
    fraudTable: "fraud_5m",
    financeTable: "finance_5m",
    fraud: { delay: 2, lateness: 3 },
    finance: { delay: 4, lateness: 5 },
  });

describe("rolloutOutputs", () => {
  it("a spec's only sink: one pair, each side on its version's physical table", () => {
    const { pairs, skipped } = rolloutOutputs(
      { pipelineVersionId: "b", spec: one("settled"), sinkTables: { "public.settled": "settled@v1" } },
      { pipelineVersionId: "g", spec: one("settled"), sinkTables: { "public.settled": "settled@v2" } },
    );
    expect(skipped).toEqual([]);
    expect(pairs).toHaveLength(1);
    expect(pairs[0]!.output).toBe("");
    expect(pairs[0]!.blue).toMatchObject({
      pipelineVersionId: "b",
      table: { schema: "sluice_sinks", name: "settled@v1" },
    });
    expect(pairs[0]!.green).toMatchObject({
      pipelineVersionId: "g",
      table: { schema: "sluice_sinks", name: "settled@v2" },
    });
    expect(pairs[0]!.green.output).toBeUndefined();
  });

  it("several outputs: one pair per output, named", () => {
    const tables = (v: number) => ({
      "public.fraud_5m": `fraud_5m@v${v}`,
      "public.finance_5m": `finance_5m@v${v}`,
    });
    const { pairs, skipped } = rolloutOutputs(
      { pipelineVersionId: "b", spec: views(), sinkTables: tables(1) },
      { pipelineVersionId: "g", spec: views(), sinkTables: tables(2) },
    );
    expect(skipped).toEqual([]);
    expect(pairs.map((p) => [p.output, p.blue.output, p.blue.table.name, p.green.table.name])).toEqual([
      ["finance", "finance", "finance_5m@v1", "finance_5m@v2"],
      ["fraud", "fraud", "fraud_5m@v1", "fraud_5m@v2"],
    ]);
  });

  it("outputs only one side has are skipped with why", () => {
    const { pairs, skipped } = rolloutOutputs(
      { pipelineVersionId: "b", spec: one("settled"), sinkTables: { "public.settled": "settled@v1" } },
      {
        pipelineVersionId: "g",
        spec: views(),
        sinkTables: { "public.fraud_5m": "fraud_5m@v2", "public.finance_5m": "finance_5m@v2" },
      },
    );
    expect(pairs).toEqual([]);
    expect(skipped).toEqual([
      { output: "", reason: "the sink is only in blue's spec: nothing to compare it with" },
      { output: "finance", reason: "output finance is only in green's spec: nothing to compare it with" },
      { output: "fraud", reason: "output fraud is only in green's spec: nothing to compare it with" },
    ]);
  });
});
