import { describe, expect, it } from "vitest";
import {
  InvalidDurationError,
  canonicalDuration,
  durationProblem,
  formatDuration,
  parseDuration,
} from "./duration";

describe("durations", () => {
  it.each([
    ["500ms", 500],
    ["30s", 30_000],
    ["10m", 600_000],
    ["2h", 7_200_000],
    ["1d", 86_400_000],
    ["1h30m", 5_400_000],
    [0, 0],
    ["0", 0],
    ["0s", 0],
  ] as const)("parses %j as %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["10", "10 m", "-5m", "1.5h", "10min", "", "30m1h", "1m1m"])(
    "rejects %j with the accepted forms",
    (text) => {
      expect(durationProblem(text)).toBeDefined();
      expect(() => parseDuration(text)).toThrow(InvalidDurationError);
    },
  );

  it("rejects a bare number other than 0 because it has no unit", () => {
    expect(durationProblem(30)).toMatch(/has no unit/);
  });

  it("formats with the largest unit that divides exactly", () => {
    expect(formatDuration(0)).toBe("0s");
    expect(formatDuration(90_000)).toBe("90s");
    expect(formatDuration(3_600_000)).toBe("1h");
    expect(formatDuration(1_500)).toBe("1500ms");
    expect(() => formatDuration(-1)).toThrow(InvalidDurationError);
  });

  it("gives equal durations one canonical form", () => {
    expect(canonicalDuration("60s")).toBe("1m");
    expect(canonicalDuration("1h30m")).toBe("90m");
    expect(canonicalDuration("24h")).toBe("1d");
    expect(canonicalDuration(0)).toBe("0s");
  });
});
