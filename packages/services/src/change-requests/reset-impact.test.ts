// What a checkpoint reset does, and which resets are refused because they would make the result wrong.
import { describe, expect, it } from "vitest";
import { resetImpact, type TResetShape } from "./reset-impact";

const LEDGER: TResetShape = { aggregate: false, cdc: false, dedupe: true, webhook: false };
const WINDOWS: TResetShape = { aggregate: true, cdc: false, dedupe: true, webhook: false };
const CDC: TResetShape = { aggregate: false, cdc: true, dedupe: true, webhook: false };
const WEBHOOK: TResetShape = { aggregate: false, cdc: false, dedupe: true, webhook: true };
const bounds = [
  { partition: 0, low: 0, high: 100 },
  { partition: 1, low: 20, high: 80 },
];
const checkpoint = { "0": 90, "1": 70 };

describe("resetImpact", () => {
  it("counts per partition the events a rewind re-reads, and calls an append ledger rewind harmless", () => {
    const i = resetImpact({ shape: LEDGER, target: { kind: "earliest" }, state: "keep", checkpoint, bounds });
    expect(i.partitions.map((p) => [p.partition, p.current, p.target, p.reprocessed, p.skipped])).toEqual([
      [0, 90, 0, 90, 0],
      [1, 70, 20, 50, 0],
    ]);
    expect(i).toMatchObject({ reprocessed: 140, skipped: 0, refusals: [] });
    expect(i.result).toBe(
      "harmless for an append ledger: its key absorbs the 140 re-read event(s) (counted as duplicates), kept or cleared state alike",
    );
  });

  it("resolves a timestamp per partition and warns when it is before a partition's log start", () => {
    const i = resetImpact({
      shape: LEDGER,
      target: { kind: "timestamp", at: new Date("2026-12-01T10:00:00Z") },
      state: "keep",
      checkpoint,
      bounds,
      byTime: { 0: 60, 1: 20 },
    });
    expect(i.partitions.map((p) => [p.target, p.reprocessed])).toEqual([
      [60, 30],
      [20, 50],
    ]);
    expect(i.warnings).toEqual([
      "the time is at or before partition 1's log start (offset 20): older events are gone (retention) and are not re-read",
    ]);
  });

  it("counts skipped events of a reset to latest and warns they never reach the sink", () => {
    const i = resetImpact({ shape: LEDGER, target: { kind: "latest" }, state: "keep", checkpoint, bounds });
    expect(i).toMatchObject({ reprocessed: 0, skipped: 20, refusals: [] });
    expect(i.warnings).toEqual([
      "10 event(s) on partition 0 are skipped: they never reach the sink",
      "10 event(s) on partition 1 are skipped: they never reach the sink",
    ]);
  });

  it("refuses explicit offsets past the log end, before the log start, or on a partition that does not exist", () => {
    const i = resetImpact({
      shape: LEDGER,
      target: { kind: "offsets", offsets: { "0": 101, "1": 5, "7": 0 } },
      state: "keep",
      checkpoint,
      bounds,
    });
    expect(i.refusals).toEqual([
      "partition 7 does not exist: the topic has partitions 0, 1",
      'partition 0: offset 101 is past the log end 100; choose at most 100 (or "latest")',
      'partition 1: offset 5 is before the log start 20: those events are gone (retention); choose at least 20 (or "earliest")',
    ]);
  });

  it("refuses rewinding a windowed aggregate while keeping its state: it would double count", () => {
    const i = resetImpact({
      shape: WINDOWS,
      target: { kind: "offsets", offsets: { "0": 50 } },
      state: "keep",
      checkpoint,
      bounds,
    });
    expect(i.refusals).toEqual([
      "rewinding a windowed aggregate while keeping its window state double counts: the 40 re-read event(s) are already in their windows. Clear the state and reset to earliest to rebuild, or do not rewind.",
    ]);
  });

  it("lets a windowed aggregate rebuild from the start of the topic with cleared state, and refuses a mid-way rebuild", () => {
    const full = [{ partition: 0, low: 0, high: 100 }];
    expect(
      resetImpact({ shape: WINDOWS, target: { kind: "earliest" }, state: "clear", checkpoint, bounds: full })
        .refusals,
    ).toEqual([]);
    expect(
      resetImpact({
        shape: WINDOWS,
        target: { kind: "offsets", offsets: { "0": 50 } },
        state: "clear",
        checkpoint,
        bounds: full,
      }).refusals,
    ).toHaveLength(1);
    expect(
      resetImpact({ shape: WINDOWS, target: { kind: "latest" }, state: "keep", checkpoint, bounds: full })
        .refusals,
    ).toEqual([]);
  });

  it("refuses keeping dedup state when rewinding a webhook pipeline (nothing would be re-sent), and a mid-way CDC rebuild", () => {
    expect(
      resetImpact({ shape: WEBHOOK, target: { kind: "earliest" }, state: "keep", checkpoint, bounds })
        .refusals[0],
    ).toMatch(/^keeping the dedup state makes every re-read event a "duplicate"/);
    expect(
      resetImpact({ shape: WEBHOOK, target: { kind: "earliest" }, state: "clear", checkpoint, bounds })
        .refusals,
    ).toEqual([]);
    expect(
      resetImpact({
        shape: CDC,
        target: { kind: "offsets", offsets: { "0": 50 } },
        state: "keep",
        checkpoint,
        bounds,
      }).refusals,
    ).toEqual([]);
    expect(
      resetImpact({
        shape: CDC,
        target: { kind: "offsets", offsets: { "0": 50 } },
        state: "clear",
        checkpoint,
        bounds,
      }).refusals,
    ).toHaveLength(1);
  });
});
