import { describe, expect, it } from "vitest";
import { advancePartitionClocks, combinedEventTime } from "./partition-watermark";

const t = (s: string) => new Date(`2025-01-01T${s}Z`);

describe("per-partition watermark", () => {
  it("follows the slowest active partition, not the fastest", () => {
    const clocks = advancePartitionClocks(
      undefined,
      {
        partitionsWithData: [0, 1],
        maxEventTimeByPartition: new Map([
          [0, t("00:10:00")],
          [1, t("00:02:00")],
        ]),
      },
      t("12:00:00"),
    );
    expect(combinedEventTime(clocks, t("12:00:01"), 60_000).eventTime).toEqual(t("00:02:00"));
  });

  it("a partition that read nothing for the idle timeout stops holding the watermark back", () => {
    let clocks = advancePartitionClocks(
      undefined,
      {
        partitionsWithData: [0, 1],
        maxEventTimeByPartition: new Map([
          [0, t("00:10:00")],
          [1, t("00:02:00")],
        ]),
      },
      t("12:00:00"),
    );
    clocks = advancePartitionClocks(
      clocks,
      { partitionsWithData: [0], maxEventTimeByPartition: new Map([[0, t("00:11:00")]]) },
      t("12:00:30"),
    );
    expect(combinedEventTime(clocks, t("12:00:30"), 60_000).eventTime).toEqual(t("00:02:00"));
    clocks = advancePartitionClocks(
      clocks,
      { partitionsWithData: [0], maxEventTimeByPartition: new Map([[0, t("00:12:00")]]) },
      t("12:01:30"),
    );
    const combined = combinedEventTime(clocks, t("12:01:30"), 60_000);
    expect(combined.eventTime).toEqual(t("00:12:00"));
    expect(combined.partitions.map((p) => [p.partition, p.idle])).toEqual([
      [0, false],
      [1, true],
    ]);
  });

  it("when every partition is idle, the newest event time seen anywhere counts", () => {
    const clocks = advancePartitionClocks(
      undefined,
      {
        partitionsWithData: [0, 1],
        maxEventTimeByPartition: new Map([
          [0, t("00:10:00")],
          [1, t("00:02:00")],
        ]),
      },
      t("12:00:00"),
    );
    expect(combinedEventTime(clocks, t("13:00:00"), 60_000).eventTime).toEqual(t("00:10:00"));
  });

  it("a partition read again keeps its highest event time (maxima never move back)", () => {
    let clocks = advancePartitionClocks(
      undefined,
      { partitionsWithData: [0], maxEventTimeByPartition: new Map([[0, t("00:10:00")]]) },
      t("12:00:00"),
    );
    clocks = advancePartitionClocks(
      clocks,
      { partitionsWithData: [0], maxEventTimeByPartition: new Map([[0, t("00:05:00")]]) },
      t("12:00:05"),
    );
    expect(clocks["0"]).toEqual({
      max: t("00:10:00").toISOString(),
      lastDataAt: t("12:00:05").toISOString(),
    });
  });

  it("a partition with records but no event time yet has no clock", () => {
    const clocks = advancePartitionClocks(
      undefined,
      { partitionsWithData: [0, 1], maxEventTimeByPartition: new Map([[0, t("00:10:00")]]) },
      t("12:00:00"),
    );
    expect(Object.keys(clocks)).toEqual(["0"]);
  });
});
