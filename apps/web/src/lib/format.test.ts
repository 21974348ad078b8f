import { describe, expect, it } from "vitest";
import { formatBytes, formatCount, formatMs, formatTime, formatValue } from "./format";

describe("formatMs: a duration in the unit it reads best in", () => {
  it("milliseconds, then seconds and minutes with one decimal under ten", () => {
    expect([0, 850, 999.6].map(formatMs)).toEqual(["0 ms", "850 ms", "1000 ms"]);
    expect([1000, 4200, 12_400].map(formatMs)).toEqual(["1.0 s", "4.2 s", "12 s"]);
    expect([60_000, 210_000, 900_000].map(formatMs)).toEqual(["1.0 min", "3.5 min", "15 min"]);
  });

  it("hours up to two days, then days", () => {
    expect([2 * 3600_000, 12 * 3600_000].map(formatMs)).toEqual(["2.0 h", "12.0 h"]);
    expect(formatMs(60 * 3600_000)).toBe("2.5 d");
  });

  it("a negative duration keeps its sign and its unit; none is a dash", () => {
    expect(formatMs(-4200)).toBe("-4.2 s");
    expect(formatMs(null)).toBe("—");
    expect(formatMs(undefined)).toBe("—");
  });
});

describe("formatBytes", () => {
  it("bytes, then binary units with one decimal under ten", () => {
    expect([0, 1023].map(formatBytes)).toEqual(["0 B", "1023 B"]);
    expect([1024, 1536, 20 * 1024].map(formatBytes)).toEqual(["1.0 KiB", "1.5 KiB", "20 KiB"]);
    expect([3 * 1024 ** 2, 1024 ** 3, 2048 * 1024 ** 4].map(formatBytes)).toEqual([
      "3.0 MiB",
      "1.0 GiB",
      "2048 TiB",
    ]);
  });
});

describe("formatCount", () => {
  it("separates thousands; none is a dash", () => {
    expect(formatCount(0)).toBe("0");
    expect(formatCount(26_396)).toBe("26,396");
    expect(formatCount(1_234_567)).toBe("1,234,567");
    expect(formatCount(null)).toBe("—");
    expect(formatCount(undefined)).toBe("—");
  });
});

describe("formatValue", () => {
  it("rates and counts compact, or exact when asked", () => {
    expect(formatValue(1234, "rate")).toBe("1.2k/s");
    expect(formatValue(1234.567, "rate", true)).toBe("1,234.57/s");
    expect(formatValue(2_500_000, "count")).toBe("2.5m");
    expect(formatValue(2_500_000, "count", true)).toBe("2,500,000");
  });

  it("durations and bytes as formatMs and formatBytes", () => {
    expect(formatValue(4200, "ms")).toBe(formatMs(4200));
    expect(formatValue(1536, "bytes")).toBe(formatBytes(1536));
  });

  it("shares as percentages, with more decimals for small ones", () => {
    expect(formatValue(0.5, "share")).toBe("50.0%");
    expect(formatValue(0.05, "share")).toBe("5.00%");
    expect(formatValue(0.0005, "share")).toBe("0.050%");
    expect(formatValue(0, "share")).toBe("0.00%");
  });

  it("nothing to show is a dash", () => {
    expect(formatValue(null, "count")).toBe("—");
    expect(formatValue(undefined, "rate")).toBe("—");
    expect(formatValue(Number.NaN, "ms")).toBe("—");
  });
});

describe("formatTime", () => {
  it("none is a dash", () => {
    expect(formatTime(null)).toBe("—");
    expect(formatTime(undefined)).toBe("—");
  });
});
