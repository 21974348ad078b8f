import { describe, expect, it } from "vitest";
import { parseCliArgs, parseDuration, UsageError, type CliConfig } from "./cli-options";

const config = (argv: string[], env?: string[]): CliConfig => {
  const r = parseCliArgs(argv, env);
  if (r.help) throw new Error("unexpected help");
  return r.config;
};

describe("parseCliArgs", () => {
  it("parses the documented example", () => {
    const c = config(
      "--topic payments --rate 200 --merchants 300 --seed 42 --duplicates 0.05 --late 0.02 --out-of-order 0.05 --malformed 0.01".split(
        " ",
      ),
    );
    expect(c).toMatchObject({
      topic: "payments",
      rate: 200,
      count: undefined,
      partitions: 6,
      brokers: ["127.0.0.1:9092"],
      simulatedClock: null,
    });
    expect(c.stream).toMatchObject({
      seed: "42",
      merchants: 300,
      duplicateShare: 0.05,
      lateShare: 0.02,
      outOfOrderShare: 0.05,
      malformedShare: 0.01,
    });
  });

  it("defaults: 200/s until stopped; --count alone means as fast as possible", () => {
    expect(config([]).rate).toBe(200);
    expect(config(["--count", "5000"])).toMatchObject({ rate: undefined, count: 5000 });
    expect(config(["--count", "5000", "--rate", "50"])).toMatchObject({ rate: 50, count: 5000 });
  });

  it("brokers: flag, then KAFKA_BROKERS, then the default", () => {
    expect(config(["--brokers", "a:1,b:2"], ["c:3"]).brokers).toEqual(["a:1", "b:2"]);
    expect(config([], ["c:3"]).brokers).toEqual(["c:3"]);
    expect(config([]).brokers).toEqual(["127.0.0.1:9092"]);
  });

  it("parses durations, drift and the simulated clock", () => {
    const c = config([
      "--late-min",
      "5m",
      "--late-max",
      "2h",
      "--extra-field",
      "campaign=spring",
      "--extra-field",
      "tier=3",
      "--type-change",
      "amount=non-numeric-string",
      "--drift-start",
      "100",
      "--sim-start",
      "2025-06-01T00:00:00Z",
      "--rate",
      "100",
    ]);
    expect(c.stream).toMatchObject({
      lateMinMs: 300_000,
      lateMaxMs: 7_200_000,
      extraFields: { campaign: "spring", tier: 3 },
      typeChanges: { amount: "non-numeric-string" },
      driftStartAt: 100,
    });
    expect(c.simulatedClock).toEqual({ start: Date.parse("2025-06-01T00:00:00Z"), stepMs: 10 });
  });

  it.each([
    [["--duplicates", "1.5"], /--duplicates: expected a share/],
    [["--late", "abc"], /--late: expected a number/],
    [["--merchants", "0"], /--merchants/],
    [["--count", "-1"], /--count/],
    [["--rate", "0"], /--rate/],
    [["--topic", "bad topic"], /--topic/],
    [["--brokers", "nohost"], /--brokers/],
    [["--late-max", "soon"], /--late-max: expected a duration/],
    [["--late-min", "2h", "--late-max", "1h"], /lateMaxMs/],
    [["--type-change", "merchant_id=number"], /merchant_id/],
    [["--extra-field", "novalue"], /name=value/],
    [["--sim-start", "yesterday"], /--sim-start/],
    [["--frobnicate"], /Unknown option/],
    [["--seed"], /argument missing/],
    [["positional"], /positional/],
  ])("rejects %j", (argv, message) => {
    expect(() => parseCliArgs(argv as string[])).toThrow(UsageError);
    expect(() => parseCliArgs(argv as string[])).toThrow(message);
  });

  it("recognises --help and -h", () => {
    expect(parseCliArgs(["--help"])).toEqual({ help: true });
    expect(parseCliArgs(["-h", "--rate", "5"])).toEqual({ help: true });
  });
});

describe("parseDuration", () => {
  it("understands ms, s, m, h and bare milliseconds", () => {
    expect(parseDuration("250ms")).toBe(250);
    expect(parseDuration("1.5s")).toBe(1500);
    expect(parseDuration("15m")).toBe(900_000);
    expect(parseDuration("3h")).toBe(10_800_000);
    expect(parseDuration("42")).toBe(42);
    expect(parseDuration("-1s")).toBeNull();
    expect(parseDuration("1d")).toBeNull();
  });
});
