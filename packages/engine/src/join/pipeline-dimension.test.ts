import { describe, expect, it } from "vitest";
import { validateSpec, ZDimension, type TPipelineDimension, type TPipelineSpec } from "@sluice/pipeline-spec";
import { dimensionShapeProblems } from "./dimension-pipeline";
import { versionAt } from "./dimension-versions";
import { historyVersions } from "./pipeline-dimension-feed";

const ms = (minutes: number) => minutes * 60_000;

describe("historyVersions: another pipeline's SCD2 rows as the join's versions", () => {
  it("a row is valid from valid_from; a valid_to no row starts at is a delete", () => {
    const versions = historyVersions([
      { fromMs: ms(0), toMs: ms(10), values: { status: "a" } },
      { fromMs: ms(10), toMs: ms(20), values: { status: "b" } }, // closed at +20m: deleted
      { fromMs: ms(30), toMs: null, values: { status: "c" } }, // back at +30m, current
    ]);
    const at = (m: number) => {
      const v = versionAt(versions, ms(m));
      return v === undefined ? "none" : v.deleted ? "deleted" : v.values.status;
    };
    expect([at(-1), at(0), at(9), at(10), at(19), at(20), at(29), at(30), at(1000)]).toEqual([
      "none",
      "a",
      "a",
      "b",
      "b",
      "deleted",
      "deleted",
      "c",
      "c",
    ]);
    expect(historyVersions([{ fromMs: 0, toMs: ms(5), values: {} }]).map((v) => v.deleted)).toEqual([
      false,
      true,
    ]);
  });
});

function spec(raw: Record<string, unknown>): TPipelineSpec {
  const r = validateSpec(raw);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.spec;
}

const history = (over: Record<string, unknown> = {}) =>
  spec({
    name: "customer-history",
    owner: "risk",
    source: { kafka: { topic: "customer-changes" } },
    contract: {
      fields: {
        customer_id: "string",
        status: "string",
        risk: "int?",
        changed_at: "timestamp",
        version: "int",
      },
    },
    eventTime: { column: "changed_at", watermarkDelay: "1m" },
    cdc: { key: ["customer_id"], sequenceBy: "changed_at", scdType: 2 },
    sink: { postgres: { table: "customer_history" } },
    ...over,
  });

const dim = (fields: Record<string, string>, key = ["customer_id"]) =>
  ZDimension.parse({ pipeline: "customer-history", key, contract: { fields } }) as TPipelineDimension;

describe("dimensionShapeProblems: can this pipeline be the dimension", () => {
  it("needs SCD2 history sequenced by its event time, its key, and the declared columns with their types", () => {
    const ok = dim({ customer_id: "string", status: "string", risk: "int", valid_to: "timestamp" });
    expect(dimensionShapeProblems(ok, history())).toEqual([]);
    expect(
      dimensionShapeProblems(
        ok,
        history({ cdc: { key: ["customer_id"], sequenceBy: "changed_at", scdType: 1 } }),
      ),
    ).toEqual([expect.stringMatching(/does not keep SCD2 history/)]);
    expect(
      dimensionShapeProblems(
        ok,
        history({ cdc: { key: ["customer_id"], sequenceBy: "version", scdType: 2 } }),
      ),
    ).toEqual([expect.stringMatching(/sequenced by version, not by its event time changed_at/)]);
    expect(
      dimensionShapeProblems(
        dim({ customer_id: "string", status: "double", tier: "string", version: "int" }, ["status"]),
        history(),
      ),
    ).toEqual([
      expect.stringMatching(/key \[status\] must be its cdc.key \[customer_id\]/),
      expect.stringMatching(/status is string in its table, not double/),
      expect.stringMatching(/no column tier/),
      expect.stringMatching(/key field status must be a string or int/),
    ]);
  });
});
