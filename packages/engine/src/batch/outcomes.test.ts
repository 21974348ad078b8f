// The outcome counts are parsed from one schema; each batch's counts must be its own object, or a
// drop counted in one batch would show in every other (the schema's fallback for `dropped` is a factory).
import { describe, expect, it } from "vitest";
import { emptyOutcomes, totalOutcomes, ZOutcomeCounts } from "./outcomes";

describe("outcome counts", () => {
  it("every batch starts from its own empty counts", () => {
    const first = emptyOutcomes();
    first.dropped.known_type = 3;
    first.sink = 2;
    expect(emptyOutcomes()).toEqual({
      sink: 0,
      duplicate: 0,
      filtered: 0,
      quarantined: 0,
      deadLetter: 0,
      late: 0,
      stale: 0,
      dropped: {},
    });
    expect(totalOutcomes(first)).toBe(5);
  });

  it("a record without `stale` (or with a malformed count) reads it as 0", () => {
    expect(ZOutcomeCounts.parse({ sink: 7, late: "x", dropped: { a: 1 } })).toEqual({
      sink: 7,
      duplicate: 0,
      filtered: 0,
      quarantined: 0,
      deadLetter: 0,
      late: 0,
      stale: 0,
      dropped: { a: 1 },
    });
  });
});
