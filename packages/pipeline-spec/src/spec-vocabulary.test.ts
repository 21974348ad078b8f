import { describe, expect, it } from "vitest";
import { specVocabulary } from "./spec-vocabulary";

describe("specVocabulary", () => {
  it("lists every section's keys from the schema, each with a line of docs", () => {
    const v = specVocabulary();
    expect(v[""]!.map((k) => k.key)).toEqual(
      expect.arrayContaining(["name", "owner", "source", "contract", "expectations", "sink"]),
    );
    expect(v["source.kafka"]!.map((k) => k.key)).toEqual(
      expect.arrayContaining(["topic", "startingOffsets", "maxOffsetsPerTrigger"]),
    );
    expect(v["expectations[]"]!.map((k) => k.key)).toEqual(["name", "expr", "action"]);
    const undocumented = Object.entries(v).flatMap(([section, keys]) =>
      keys.filter((k) => k.doc === "").map((k) => `${section}.${k.key}`),
    );
    expect(undocumented).toEqual([]);
  });
});
