import { describe, expect, it } from "vitest";
import { ZContract, contractColumns, postgresTypeFor, FIELD_TYPES } from "./contract";
import { outputColumns, measureResultType } from "./output-columns";

describe("contract helpers", () => {
  it("lists columns ordered by name, whatever the declaration order", () => {
    const contract = ZContract.parse({
      fields: { seq: "int?", event_id: "string", amount: { type: "decimal" } },
    });
    expect(contractColumns({ contract })).toEqual([
      { name: "amount", type: "decimal", optional: false },
      { name: "event_id", type: "string", optional: false },
      { name: "seq", type: "int", optional: true },
    ]);
  });

  it("maps every field type to a Postgres type", () => {
    expect(Object.fromEntries(FIELD_TYPES.map((t) => [t, postgresTypeFor(t)]))).toEqual({
      string: "text",
      int: "bigint",
      decimal: "numeric",
      double: "double precision",
      boolean: "boolean",
      timestamp: "timestamptz",
      json: "jsonb",
    });
  });

  it("types aggregate results: counts are ints, sums keep the type, min/max/avg can be null", () => {
    const contract = ZContract.parse({
      fields: { merchant_id: "string", amount: "decimal", seq: "int", event_time: "timestamp" },
    });
    expect(measureResultType({ fn: "count" }, contract)).toEqual({ type: "int", optional: false });
    expect(measureResultType({ fn: "sum", column: "amount" }, contract)).toEqual({
      type: "decimal",
      optional: false,
    });
    expect(measureResultType({ fn: "avg", column: "seq" }, contract)).toEqual({
      type: "double",
      optional: true,
    });
    expect(measureResultType({ fn: "max", column: "event_time" }, contract)).toEqual({
      type: "timestamp",
      optional: true,
    });
    const aggregate = {
      window: { tumbling: "5m" },
      groupBy: ["merchant_id"],
      measures: { settled: { fn: "sum" as const, column: "amount" }, events: { fn: "count" as const } },
      outputMode: "update" as const,
      allowedLateness: "0s",
    };
    expect(outputColumns({ contract, aggregate }).map((c) => c.name)).toEqual([
      "merchant_id",
      "window_start",
      "window_end",
      "events",
      "settled",
    ]);
  });

  it("writes selected columns in the order given", () => {
    const contract = ZContract.parse({
      fields: { event_id: "string", amount: "decimal", currency: "string" },
    });
    expect(
      outputColumns({ contract, transform: { select: ["currency", "event_id"] } }).map((c) => c.name),
    ).toEqual(["currency", "event_id"]);
  });
});
