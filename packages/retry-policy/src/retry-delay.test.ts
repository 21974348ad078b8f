import { describe, expect, it } from "vitest";
import { jitteredMs, retryDelayMs } from "./retry-delay";

describe("retryDelayMs", () => {
  it("doubles from the base: base, 2·base, 4·base, …", () => {
    const policy = { baseMs: 250, capMs: 1_000_000 };
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(policy, n))).toEqual([250, 500, 1000, 2000, 4000]);
  });

  it("treats attempt 0 as the first retry", () => {
    expect(retryDelayMs({ baseMs: 1000, capMs: 30_000 }, 0)).toBe(1000);
  });

  it("never waits longer than the cap, however many attempts", () => {
    const policy = { baseMs: 1000, capMs: 30_000 };
    expect([5, 6, 7, 8].map((n) => retryDelayMs(policy, n))).toEqual([16_000, 30_000, 30_000, 30_000]);
    expect(retryDelayMs(policy, 1_000_000)).toBe(30_000);
  });

  it("without jitter the wait is exact and random is never asked", () => {
    const random = () => {
      throw new Error("random called without jitter");
    };
    expect(retryDelayMs({ baseMs: 5000, capMs: 600_000, jitter: 0 }, 3, random)).toBe(20_000);
    expect(retryDelayMs({ baseMs: 5000, capMs: 600_000 }, 3, random)).toBe(20_000);
  });

  it("jitter spreads the wait over ±the fraction, its ends included", () => {
    const policy = { baseMs: 1000, capMs: 30_000, jitter: 0.2 };
    expect(retryDelayMs(policy, 2, () => 0)).toBe(1600);
    expect(retryDelayMs(policy, 2, () => 0.5)).toBe(2000);
    expect(retryDelayMs(policy, 2, () => 0.999999)).toBe(2400);
  });

  it("jitter applies around the capped wait, so it stays within cap·(1 ± jitter)", () => {
    const policy = { baseMs: 1000, capMs: 30_000, jitter: 0.2 };
    for (let i = 0; i < 1000; i++) {
      const delay = retryDelayMs(policy, 20);
      expect(delay).toBeGreaterThanOrEqual(24_000);
      expect(delay).toBeLessThanOrEqual(36_000);
      expect(Number.isInteger(delay)).toBe(true);
    }
  });
});

describe("jitteredMs", () => {
  it("spreads a period by ±the fraction: 0.25 → 75–125%", () => {
    expect(jitteredMs(10_000, 0.25, () => 0)).toBe(7500);
    expect(jitteredMs(10_000, 0.25, () => 0.999999)).toBe(12_500);
    for (let i = 0; i < 1000; i++) {
      const ms = jitteredMs(10_000, 0.25);
      expect(ms).toBeGreaterThanOrEqual(7500);
      expect(ms).toBeLessThanOrEqual(12_500);
    }
  });

  it("is exactly the period without jitter", () => {
    expect(jitteredMs(1234.5, 0)).toBe(1234.5);
  });
});
