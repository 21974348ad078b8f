// Inferring a contract type from the values a producer sends, and collecting drift only on its rows.
import { describe, expect, it } from "vitest";
import { DriftCollector, inferFieldType, mergeFieldTypes } from "./schema-drift";

const record = (offset: number, timestamp: number) => ({
  partition: 1,
  offset,
  timestamp,
  key: null,
  value: Buffer.from("{}"),
});

describe("schema drift", () => {
  it("infers the narrowest type and widens numbers, falling back to json when values disagree", () => {
    expect([true, 3, 3.5, "x", "2026-12-01T10:00:00Z", { a: 1 }, [1], null].map(inferFieldType)).toEqual([
      "boolean",
      "int",
      "double",
      "string",
      "timestamp",
      "json",
      "json",
      undefined,
    ]);
    expect(mergeFieldTypes("int", "double")).toBe("double");
    expect(mergeFieldTypes("timestamp", "string")).toBe("string");
    expect(mergeFieldTypes("int", "string")).toBe("json");
    expect(mergeFieldTypes(undefined, "int")).toBe("int");
  });

  it("counts each field per outcome with first/last seen and at most 5 samples, and reports nothing without drift", () => {
    const c = new DriftCollector();
    expect(c.result()).toBeUndefined();
    for (let i = 0; i < 7; i++)
      c.rescued({ channel: "web" }, { event_id: `e-${i}`, channel: "web" }, record(i, 1000 + i));
    c.mismatch("seq", "int", 2.5, { event_id: "q" }, record(9, 500));
    expect(c.result()).toEqual([
      {
        field: "channel",
        outcome: "rescued",
        inferredType: "string",
        types: { string: 7 },
        count: 7,
        firstSeenMs: 1000,
        lastSeenMs: 1006,
        samples: Array.from({ length: 5 }, (_, i) => ({
          event_id: `e-${i}`,
          channel: "web",
          _partition: 1,
          _offset: i,
        })),
      },
      {
        field: "seq",
        outcome: "quarantined",
        inferredType: "double",
        types: { double: 1 },
        declaredType: "int",
        count: 1,
        firstSeenMs: 500,
        lastSeenMs: 500,
        samples: [{ event_id: "q", _partition: 1, _offset: 9 }],
      },
    ]);
  });

  it("counts the types a field's values arrive as: a set with counts, not one merged type", () => {
    const c = new DriftCollector();
    const values = [{ a: 1 }, { b: 2 }, true, null, { c: 3 }];
    values.forEach((v, i) => c.mismatch("amount", "decimal", v, { event_id: `e-${i}` }, record(i, 1000)));
    expect(c.result()![0]).toMatchObject({
      inferredType: "json",
      types: { json: 3, boolean: 1, null: 1 },
      count: 5,
    });
  });
});
