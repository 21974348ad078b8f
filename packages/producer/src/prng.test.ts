import { describe, expect, it } from "vitest";
import { Prng, WeightedPicker } from "./prng";

describe("Prng", () => {
  it("repeats exactly for the same seed and differs for another", () => {
    const a = Prng.from(42);
    const b = Prng.from(42);
    const c = Prng.from(43);
    const xs = Array.from({ length: 1000 }, () => a.nextUint32());
    expect(Array.from({ length: 1000 }, () => b.nextUint32())).toEqual(xs);
    const zs = Array.from({ length: 1000 }, () => c.nextUint32());
    expect(zs.filter((z, i) => z === xs[i]).length).toBeLessThan(3);
  });

  it("treats 42 and '42' as the same seed", () => {
    expect(Prng.from(42).hex(32)).toBe(Prng.from("42").hex(32));
  });

  it("forks are independent of how far the parent has run", () => {
    const a = Prng.from(7);
    const before = a.fork("late").hex(16);
    for (let i = 0; i < 100; i++) a.next();
    expect(a.fork("late").hex(16)).toBe(before);
    expect(a.fork("duplicate").hex(16)).not.toBe(before);
  });

  it("keeps int() inside its bounds and hits both ends", () => {
    const r = Prng.from("bounds");
    const seen = new Set<number>();
    for (let i = 0; i < 5000; i++) {
      const x = r.int(-3, 3);
      expect(x).toBeGreaterThanOrEqual(-3);
      expect(x).toBeLessThanOrEqual(3);
      seen.add(x);
    }
    expect([...seen].sort((x, y) => x - y)).toEqual([-3, -2, -1, 0, 1, 2, 3]);
    expect(() => r.int(2, 1)).toThrow(RangeError);
  });

  it("is roughly uniform", () => {
    const r = Prng.from(1);
    const buckets = new Array(10).fill(0);
    for (let i = 0; i < 100_000; i++) buckets[Math.floor(r.next() * 10)]++;
    for (const b of buckets) expect(Math.abs(b - 10_000)).toBeLessThan(500);
  });

  it("chance(0) never, chance(1) always", () => {
    const r = Prng.from(3);
    for (let i = 0; i < 1000; i++) {
      expect(r.chance(0)).toBe(false);
      expect(r.chance(1)).toBe(true);
    }
  });
});

describe("WeightedPicker", () => {
  it("follows the weights and never picks a zero weight", () => {
    const p = new WeightedPicker([1, 0, 3]);
    const r = Prng.from(9);
    const counts = [0, 0, 0];
    for (let i = 0; i < 40_000; i++) counts[p.pick(r)]!++;
    expect(counts[1]).toBe(0);
    expect(counts[2]! / counts[0]!).toBeGreaterThan(2.7);
    expect(counts[2]! / counts[0]!).toBeLessThan(3.3);
  });

  it("rejects bad weights", () => {
    expect(() => new WeightedPicker([0, 0])).toThrow(RangeError);
    expect(() => new WeightedPicker([1, -1])).toThrow(RangeError);
  });
});
