import { describe, expect, it } from "vitest";
import { applyScd1, applyScd2, type Change, type Point } from "./change-points";
import { sequenceType } from "./sequence";

const seq = sequenceType("int");
const ch = (sequence: number, deleted = false): Change<string> => ({ sequence: String(sequence), deleted, row: `v${sequence}` });
const pt = (sequence: number, deleted = false): Point => ({ sequence: String(sequence), deleted });

/** Apply batches of SCD2 changes one after another, as the operator does, and return the history. */
function scd2(batches: Change<string>[][]): { versions: Map<string, string | null>; stale: number } {
  let stored: Point[] = [];
  const versions = new Map<string, string | null>();
  let stale = 0;
  for (const b of batches) {
    const out = applyScd2(stored, b, seq);
    for (const i of out.inserts) versions.set(i.sequence, i.validTo);
    for (const u of out.updates) versions.set(u.sequence, u.validTo);
    stored = [...stored, ...out.added.map(({ sequence, deleted }) => ({ sequence, deleted }))];
    stale += out.stale;
  }
  return { versions, stale };
}

describe("SCD1: an older sequence never overwrites a newer one", () => {
  it("keeps the newest change and counts older ones as stale", () => {
    expect(applyScd1(pt(5), [ch(3), ch(7), ch(5), ch(6)], seq)).toEqual({ winner: ch(7), stale: 2 });
    expect(applyScd1(undefined, [ch(2), ch(1)], seq)).toEqual({ winner: ch(2), stale: 0 });
    expect(applyScd1(pt(9, true), [ch(8)], seq)).toEqual({ stale: 1 });
  });
  it("a repeated sequence is applied once", () => {
    expect(applyScd1(undefined, [ch(4), ch(4)], seq).stale).toBe(1);
  });
});

describe("SCD2: history is complete whatever the arrival order", () => {
  const inOrder = [ch(1), ch(2), ch(3, true), ch(4), ch(5)];
  const expected = new Map<string, string | null>([["1", "2"], ["2", "3"], ["4", "5"], ["5", null]]);

  it("in sequence order", () => {
    expect(scd2([inOrder]).versions).toEqual(expected);
  });
  it("shuffled across batches, older sequences last", () => {
    expect(scd2([[ch(5)], [ch(3, true), ch(4)], [ch(2)], [ch(1)]]).versions).toEqual(expected);
    expect(scd2([[ch(4), ch(1)], [ch(5), ch(3, true)], [ch(2)]]).versions).toEqual(expected);
  });
  it("a delete arriving before the insert it closes still closes it", () => {
    expect(scd2([[ch(3, true)], [ch(1)]]).versions).toEqual(new Map([["1", "3"]]));
  });
  it("an exact repeat of a sequence is stale", () => {
    expect(scd2([[ch(1), ch(2)], [ch(2)]]).stale).toBe(1);
  });
});

describe("sequence order follows the column type", () => {
  it("orders decimals and timestamps by value, not text", () => {
    expect(sequenceType("decimal").compare("10.5", "9.75")).toBe(1);
    expect(sequenceType("decimal").canonical("1.50")).toBe("1.5");
    expect(sequenceType("timestamp").compare("2025-01-01T00:00:00.000Z", "2024-12-31T23:59:59.999Z")).toBe(1);
    expect(sequenceType("int").compare("10", "9")).toBe(1);
  });
});
