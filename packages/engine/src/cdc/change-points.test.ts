import { describe, expect, it } from "vitest";
import {
  applyScd1,
  applyScd2,
  evictionTimes,
  orderViolations,
  placePoints,
  type Change,
  type Point,
  type TimedPoint,
} from "./change-points";
import { sequenceType } from "./sequence";

const seq = sequenceType("int");
const ch = (sequence: number, deleted = false): Change<string> => ({
  sequence: String(sequence),
  deleted,
  row: `v${sequence}`,
});
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
  const expected = new Map<string, string | null>([
    ["1", "2"],
    ["2", "3"],
    ["4", "5"],
    ["5", null],
  ]);

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

describe("state eviction: when a point may leave the state", () => {
  const at = (sequence: number, eventTime: number | null, deleted = false): TimedPoint => ({
    sequence: String(sequence),
    deleted,
    eventTime,
  });

  it("a deleted key's point once the horizon passes the delete; a live key's newest point never", () => {
    expect(evictionTimes([at(3, 300, true)])).toEqual([300]);
    expect(evictionTimes([at(3, 300)])).toEqual([null]);
  });
  it("SCD2 history: a version once it and the point after it are behind; the current version never", () => {
    expect(evictionTimes([at(1, 100), at(2, 250), at(3, 200, true), at(4, 400)])).toEqual([
      250,
      250,
      200,
      null,
    ]);
  });
  it("without event times nothing is ever evicted", () => {
    expect(evictionTimes([at(1, null), at(2, 200, true)])).toEqual([null, 200]);
    expect(evictionTimes([at(1, 100), at(2, null)])).toEqual([null, null]);
  });
  it("placing a batch's points: new ones get their eviction time, stored ones a point now follows are rewritten", () => {
    const stored = [
      { ...at(1, 100), evictAfter: 250 },
      { ...at(2, 250), evictAfter: null },
    ];
    expect(placePoints(stored, [at(4, 400, true)], seq)).toEqual({
      insert: [{ ...at(4, 400, true), evictAfter: 400 }],
      rewrite: [{ ...at(2, 250), evictAfter: 400 }],
    });
    expect(placePoints([], [at(7, 700)], seq)).toEqual({
      insert: [{ ...at(7, 700), evictAfter: null }],
      rewrite: [],
    });
  });
  it("counts this batch's changes whose event time disagrees with their sequence", () => {
    const stored = [at(1, 100), at(5, 500)];
    expect(orderViolations(stored, [at(3, 300), at(6, 600)], seq)).toBe(0);
    // Version 3 stamped after version 5 and version 7 before it disagree; 8 and 9 stamped alike do not.
    expect(orderViolations(stored, [at(3, 900), at(7, 400), at(8, 1000), at(9, 1000)], seq)).toBe(2);
    expect(orderViolations(stored, [at(4, null)], seq)).toBe(0);
  });
});
