// The time-series services against real Postgres: batches are committed into batch_log as the engine
// writes them (the rollup trigger folds each into its 10-second bucket in the same transaction), offset
// samples as the workers write them, and every chart number is compared with batch_log itself.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import type { BatchProgress } from "@sluice/engine";
import { createTestDatabase, type TestDatabase, serveNewestVersion } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findFleet } from "./find-fleet";
import { findPartitionOffsets } from "./find-partition-offsets";
import { findPipelineSeries } from "./find-pipeline-series";
import { getPipelineSignals } from "./get-pipeline-signals";
import { offsetPoints, sampleOf } from "./offset-signals";
import {
  queryBatchBuckets,
  queryExpectationBuckets,
  queryOffsetBuckets,
  queryOffsetPoints,
  queryPartitionBuckets,
  queryRangeTotals,
} from "./rollup-queries";
import { bucketRange, type TBucketing } from "./time-range";
import { recordOffsetSamples } from "./record-offset-samples";
import { insertProgressRecord } from "./progress-records.test-helpers";
import { getBatchDetail } from "../progress/get-batch-detail";
import { findPipelineVersions } from "../pipelines/find-pipeline-versions";

let database: TestDatabase;
let db: PrismaClient;
let teamId: string;

beforeAll(async () => {
  database = await createTestDatabase("time_series");
  db = createPrismaClient(database.url);
  teamId = (await db.team.create({ data: { slug: "payments-data", name: "Payments Data" } })).id;
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

const T0 = Date.parse("2026-11-30T10:00:00.000Z");
const at = (seconds: number) => new Date(T0 + seconds * 1000);

const spec = (name: string) => ({
  name,
  source: { kafka: { topic: `${name}-topic` } },
  eventTime: { column: "event_time", watermarkDelay: "1m" },
  dedupe: { key: ["event_id"] },
  expectations: [
    { name: "known_type", action: "drop", expr: "true" },
    { name: "amount_present", action: "warn", expr: "true" },
  ],
  sink: { postgres: { table: `${name.replaceAll("-", "_")}` } },
  targets: { freshness: "2m" },
});

async function pipelineWith(name: string, versions = 1): Promise<string[]> {
  const p = await db.pipeline.create({ data: { name, ownerTeamId: teamId } });
  const ids: string[] = [];
  for (let version = 1; version <= versions; version++) {
    ids.push(
      (
        await db.pipelineVersion.create({
          data: {
            pipelineId: p.id,
            version,
            spec: spec(name),
            specHash: `${name}-${version}`,
            createdAt: at(-3600),
          },
        })
      ).id,
    );
  }
  if (versions > 0) await serveNewestVersion(db, p.id);
  return ids;
}

/** A batch as the engine commits it: 100 input rows, outcomes adding up, per-partition offsets and clocks. */
async function commit(
  pv: string,
  batchId: number,
  committedAtS: number,
  over: Partial<BatchProgress> = {},
): Promise<BatchProgress> {
  const committedAt = at(committedAtS);
  const p: BatchProgress = {
    batchId,
    pipelineVersionId: pv,
    timestamp: committedAt.toISOString(),
    inputRows: 100,
    inputRowsPerSecond: 50,
    processedRowsPerSecond: 400,
    durationMs: { plan: 2, read: 40, process: 30, commit: 28, total: 100 },
    sources: [
      {
        partition: 0,
        startOffset: batchId * 60,
        endOffset: batchId * 60 + 60,
        latestOffset: batchId * 60 + 90,
      },
      {
        partition: 1,
        startOffset: batchId * 40,
        endOffset: batchId * 40 + 40,
        latestOffset: batchId * 40 + 40,
      },
    ],
    backlog: 30,
    skippedOffsets: {},
    watermark: new Date(committedAt.getTime() - 90_000).toISOString(),
    eventTimeMax: new Date(committedAt.getTime() - 30_000).toISOString(),
    stateRows: 1000 + batchId,
    stateBytes: 40_000 + batchId,
    expectations: { known_type: 3, amount_present: 5 },
    replayed: false,
    outcomes: {
      sink: 80,
      duplicate: 6,
      filtered: 0,
      quarantined: 4,
      deadLetter: 2,
      late: 5,
      stale: 0,
      dropped: { known_type: 3 },
    },
    partitionEventTime: [
      {
        partition: 0,
        eventTimeMax: new Date(committedAt.getTime() - 30_000).toISOString(),
        lastDataAt: committedAt.toISOString(),
        idle: false,
      },
      {
        partition: 1,
        eventTimeMax: new Date(committedAt.getTime() - 600_000).toISOString(),
        lastDataAt: new Date(committedAt.getTime() - 120_000).toISOString(),
        idle: true,
      },
    ],
    latencyMs: { p50: 800 + batchId, p95: 1500 + batchId, p99: 1900 + batchId, max: 2500 },
    ingestTimeMax: new Date(committedAt.getTime() - 500).toISOString(),
    ...over,
  };
  await insertProgressRecord(db, p, committedAt);
  return p;
}

const range = (fromS: number, toS: number) => ({ from: at(fromS), to: at(toS) });

describe("bucketed time series over batch_log", () => {
  it("sums each bucket's batches exactly as batch_log holds them; a batch at the boundary lands in the next bucket", async () => {
    const [pv] = await pipelineWith("boundaries");
    await commit(pv!, 0, 9.999);
    await commit(pv!, 1, 10);
    await commit(pv!, 2, 15, {
      inputRows: 50,
      outcomes: {
        sink: 50,
        duplicate: 0,
        filtered: 0,
        quarantined: 0,
        deadLetter: 0,
        late: 0,
        stale: 0,
        dropped: {},
      },
      durationMs: { plan: 4, read: 60, process: 50, commit: 86, total: 200 },
    });
    const s = (await findPipelineSeries(db, { pipeline: "boundaries", range: range(0, 30) }))!;
    expect(s.stepSeconds).toBe(10);
    expect(s.points.map((p) => [p.t.toISOString(), p.batches, p.inputRows])).toEqual([
      [at(0).toISOString(), 1, 100],
      [at(10).toISOString(), 2, 150],
      [at(20).toISOString(), 0, 0],
    ]);
    const second = s.points[1]!;
    expect(second).toMatchObject({
      firstBatchId: 1,
      lastBatchId: 2,
      processingRate: 15,
      stateRows: 1002,
      violations: 16,
    });
    // Means per batch of the phases; the worst batch's latency.
    expect(second.durationMs).toEqual({ plan: 3, read: 50, process: 40, commit: 57, total: 150 });
    expect(second.latencyMs).toEqual({ p50: 802, p95: 1502, p99: 1902 });
    // The same numbers straight from batch_log.
    const direct = await db.$queryRaw<
      { n: number }[]
    >`SELECT sum(input_rows)::int AS n FROM batch_log WHERE pipeline_version_id = ${pv} AND committed_at >= ${at(10)} AND committed_at < ${at(20)}`;
    expect(second.inputRows).toBe(direct[0]!.n);
  });

  it("a gap with no batches is explicit: zero rows, no per-batch values, no line through it", async () => {
    const [pv] = await pipelineWith("gaps");
    await commit(pv!, 0, 1);
    await commit(pv!, 1, 61);
    const s = (await findPipelineSeries(db, { pipeline: "gaps", range: range(0, 70) }))!;
    expect(s.points).toHaveLength(7);
    const middle = s.points.slice(1, 6);
    expect(
      middle.every(
        (p) =>
          p.batches === 0 &&
          p.processingRate === 0 &&
          p.durationMs === null &&
          p.latencyMs === null &&
          p.stateRows === null,
      ),
    ).toBe(true);
    expect(s.points[6]).toMatchObject({ batches: 1, firstBatchId: 1 });
  });

  it("longer ranges re-bin the 10-second buckets without losing a row", async () => {
    const [pv] = await pipelineWith("rebin");
    for (let b = 0; b < 40; b++) await commit(pv!, b, b * 97);
    const s = (await findPipelineSeries(db, { pipeline: "rebin", range: range(-6 * 3600, 18 * 3600) }))!;
    expect(s.stepSeconds).toBe(300);
    expect(s.points.length).toBeLessThanOrEqual(361);
    expect(s.points.reduce((n, p) => n + p.inputRows, 0)).toBe(4000);
    expect(s.points.reduce((n, p) => n + p.batches, 0)).toBe(40);
  });

  it("per-partition series: backlog from the offset samples, event-time lag and idleness from the progress records", async () => {
    const [pv] = await pipelineWith("partitions");
    await commit(pv!, 0, 5);
    await recordOffsetSamples(
      db,
      [
        { pipelineVersionId: pv!, partition: 0, latestOffset: 100, committedOffset: 60 },
        { pipelineVersionId: pv!, partition: 1, latestOffset: 40, committedOffset: 40 },
      ],
      at(6),
    );
    await recordOffsetSamples(
      db,
      [
        { pipelineVersionId: pv!, partition: 0, latestOffset: 300, committedOffset: 60 },
        { pipelineVersionId: pv!, partition: 1, latestOffset: 90, committedOffset: 40 },
      ],
      at(16),
    );
    // A second sampler in the same bucket writes nothing: one sample per bucket.
    expect(
      await recordOffsetSamples(
        db,
        [{ pipelineVersionId: pv!, partition: 0, latestOffset: 999, committedOffset: 0 }],
        at(17),
      ),
    ).toBe(0);
    const s = (await findPipelineSeries(db, { pipeline: "partitions", range: range(0, 20) }))!;
    expect(s.points.map((p) => p.backlog)).toEqual([40, 290]);
    expect(s.points[1]!.inputRate).toBe((200 + 50) / 10);
    const [p0, p1] = s.partitions;
    expect(p0).toMatchObject({ partition: 0 });
    expect(p0!.points.map((p) => p.backlog)).toEqual([40, 240]);
    expect(p1!.points.map((p) => p.backlog)).toEqual([0, 50]);
    expect(p0!.points[0]).toMatchObject({ rowsRead: 60, eventTimeLagMs: 30_000, idle: false });
    expect(p1!.points[0]).toMatchObject({ rowsRead: 40, eventTimeLagMs: 600_000, idle: true });
  });

  it("the fleet's input rate and backlog summed in SQL equal offsetPoints over the per-partition samples (gaps, a re-created topic, nothing committed yet)", async () => {
    const [pv] = await pipelineWith("offset-points");
    // Three partitions over 8 minutes, samples every 10 s with gaps; partition 2 has nothing committed;
    // partition 1's topic is re-created (offsets start again at 0) halfway.
    for (let i = 0; i < 48; i++) {
      const samples = [
        { pipelineVersionId: pv!, partition: 0, latestOffset: 1000 + i * 37, committedOffset: 900 + i * 30 },
        ...(i % 7 === 3
          ? []
          : [
              {
                pipelineVersionId: pv!,
                partition: 1,
                latestOffset: i < 24 ? 5000 + i * 11 : (i - 24) * 5,
                committedOffset: i < 24 ? 4990 + i * 11 : 0,
              },
            ]),
        ...(i % 5 === 0
          ? [{ pipelineVersionId: pv!, partition: 2, latestOffset: 70 + i, committedOffset: null }]
          : []),
      ];
      await recordOffsetSamples(db, samples, at(i * 10 + 3 + (i % 3)));
    }
    for (const [fromS, toS, points] of [
      [0, 480, 48],
      [0, 480, 8],
      [0, 480, 3],
      [95, 300, 60],
    ] as const) {
      const b = bucketRange(range(fromS, toS), points);
      const expected = offsetPoints((await queryOffsetBuckets(db, [pv!], b)).map(sampleOf)).map((p) => ({
        t: p.t,
        inputRate: p.inputRate,
        backlog: p.backlog,
      }));
      const summed = (await queryOffsetPoints(db, [pv!], b)).map((r) => ({
        t: r.t,
        inputRate: r.input_rate,
        backlog: r.backlog,
      }));
      expect(summed.map((r) => r.t)).toEqual(expected.map((r) => r.t));
      expect(expected.length).toBeGreaterThanOrEqual(points === 3 ? 2 : points === 8 ? 6 : 20);
      for (const [i, e] of expected.entries()) {
        expect({
          t: summed[i]!.t,
          backlog: summed[i]!.backlog,
          measured: summed[i]!.inputRate !== null,
        }).toEqual({ t: e.t, backlog: e.backlog, measured: e.inputRate !== null });
        if (e.inputRate !== null) expect(summed[i]!.inputRate).toBeCloseTo(e.inputRate, 9);
      }
      // 5-minute buckets hold five minute-samples per partition; each bucket takes its last one:
      // minute 4's first samples, at 243 s (partition 0: 1888 − 1620) and 254 s (1: 5 − 0, 2: 95 − nothing).
      if (points === 3)
        expect(summed.find((r) => r.t.getTime() === at(0).getTime())?.backlog).toBe(268 + 5 + 95);
    }
  });

  it("a range with a restart: the failure, the restart and the replayed batch are there, nothing counted twice", async () => {
    const [pv] = await pipelineWith("restarted");
    await db.pipelineRun.create({
      data: { pipelineVersionId: pv!, status: "running", desiredState: "running" },
    });
    await commit(pv!, 0, 1);
    await db.pipelineRunTransition.create({
      data: {
        pipelineVersionId: pv!,
        action: "failed",
        fromStatus: "running",
        toStatus: "failed",
        desiredState: "running",
        actor: "worker:w1",
        reason: "Postgres unreachable",
        createdAt: at(12),
      },
    });
    await db.pipelineRunTransition.create({
      data: {
        pipelineVersionId: pv!,
        action: "restart",
        fromStatus: "failed",
        toStatus: "running",
        desiredState: "running",
        actor: "user:oona@sluice.local",
        reason: "db back",
        createdAt: at(40),
      },
    });
    await commit(pv!, 1, 45, { replayed: true });
    const s = (await findPipelineSeries(db, { pipeline: "restarted", range: range(0, 60) }))!;
    expect(s.markers.map((m) => m.label)).toEqual([
      "failed by worker:w1: Postgres unreachable",
      "restart by user:oona@sluice.local: db back",
    ]);
    expect(s.points.reduce((n, p) => n + p.batches, 0)).toBe(2);
    expect(s.points.filter((p) => p.batches > 0).map((p) => p.t)).toEqual([at(0), at(40)]);
  });

  it("a version change: each version has its own series, every version is reachable, and the change is marked", async () => {
    const name = "versioned";
    const [v1, v2] = await pipelineWith(name, 2);
    await db.pipelineVersion.update({ where: { id: v1! }, data: { supersededById: v2! } });
    await db.pipelineVersion.update({ where: { id: v2! }, data: { createdAt: at(20) } });
    await commit(v1!, 0, 5);
    await commit(v1!, 1, 15);
    await commit(v2!, 2, 25);
    const serving = (await findPipelineSeries(db, { pipeline: name, range: range(0, 30) }))!;
    expect(serving.version).toBe(2);
    expect(serving.points.map((p) => p.batches)).toEqual([0, 0, 1]);
    expect(serving.markers).toEqual([{ at: at(20), kind: "version", label: "version 2 registered" }]);
    const first = (await findPipelineSeries(db, { pipeline: name, version: 1, range: range(0, 30) }))!;
    expect(first.points.map((p) => p.batches)).toEqual([1, 1, 0]);
    expect(
      (await findPipelineVersions(db, name))!.map((v) => [v.version, v.supersededBy, v.serving]),
    ).toEqual([
      [2, null, true],
      [1, 2, false],
    ]);
    expect(await findPipelineSeries(db, { pipeline: name, version: 7, range: range(0, 30) })).toMatchObject({
      version: null,
      points: [],
    });
    expect(await findPipelineSeries(db, { pipeline: "no-such", range: range(0, 30) })).toBeNull();
  });

  it("rebuilding the rollups from batch_log in one pass gives exactly the rows the trigger folded batch by batch", async () => {
    const [pv] = await pipelineWith("rebuild");
    for (let b = 0; b < 30; b++) {
      await commit(pv!, b, b * 7, {
        ...(b % 4 === 0 ? { partitionEventTime: undefined } : {}),
        ...(b % 5 === 0 ? { latencyMs: undefined, ingestTimeMax: undefined } : {}),
        ...(b % 3 === 0 ? { expectations: { other_rule: b } } : {}),
        ...(b % 6 === 0
          ? { sources: [{ partition: 2, startOffset: b, endOffset: b + 9, latestOffset: b + 9 }] }
          : {}),
      });
    }
    const snapshot = async () => ({
      batches:
        await db.$queryRaw`SELECT * FROM batch_rollup WHERE pipeline_version_id = ${pv} ORDER BY grain_seconds, bucket_start`,
      partitions:
        await db.$queryRaw`SELECT * FROM partition_rollup WHERE pipeline_version_id = ${pv} ORDER BY grain_seconds, bucket_start, partition`,
    });
    const folded = await snapshot();
    expect((folded.batches as unknown[]).length).toBeGreaterThan(20);
    await db.$executeRaw`SELECT sluice_rebuild_rollups(${pv})`;
    expect(await snapshot()).toEqual(folded);
  });

  it("the 5-minute grain is the minute grain summed: the trigger's rows equal the set-based coarsening, and no chart number changes (boundaries, the last partial bucket)", async () => {
    const [pv] = await pipelineWith("five-minutes");
    // On both sides of 5-minute and minute boundaries; a batch after the range's end inside its last
    // 5-minute bucket (2900 s, the range ends at 2830 s); varying expectations, partitions and clocks.
    const times = [
      0, 59.999, 60, 299.999, 300, 301, 599, 600, 899.99, 900, 1234, 1500, 2700, 2750, 2820, 2825, 2900, 3000,
    ];
    for (const [b, t] of times.entries()) {
      await commit(pv!, b, t, {
        ...(b % 4 === 0 ? { partitionEventTime: undefined } : {}),
        ...(b % 5 === 0 ? { latencyMs: undefined, ingestTimeMax: undefined } : {}),
        ...(b % 3 === 0 ? { expectations: { other_rule: b } } : {}),
        ...(b % 6 === 0
          ? { sources: [{ partition: 2, startOffset: b, endOffset: b + 9, latestOffset: b + 9 }] }
          : {}),
      });
    }
    const coarse = async () => ({
      batches:
        await db.$queryRaw`SELECT * FROM batch_rollup WHERE pipeline_version_id = ${pv} AND grain_seconds = 300 ORDER BY bucket_start`,
      partitions:
        await db.$queryRaw`SELECT * FROM partition_rollup WHERE pipeline_version_id = ${pv} AND grain_seconds = 300 ORDER BY bucket_start, partition`,
    });
    const folded = await coarse();
    // Each 5-minute bucket holds exactly batch_log's batches of those 5 minutes.
    const direct = await db.$queryRaw<{ t: Date; n: number }[]>`
      SELECT date_bin('5 minutes', committed_at, '2000-01-01') AS t, count(*)::int AS n FROM batch_log WHERE pipeline_version_id = ${pv} GROUP BY 1 ORDER BY 1`;
    expect(
      (folded.batches as { bucket_start: Date; batches: number }[]).map((r) => [r.bucket_start, r.batches]),
    ).toEqual(direct.map((r) => [r.t, r.n]));
    expect(direct.slice(0, 3).map((r) => r.n)).toEqual([4, 3, 2]);
    // The set-based pass from the minute rows (the migration's backfill) writes what the trigger wrote.
    await db.$executeRaw`SELECT sluice_rollups_from_finer(60::smallint, 300::smallint, ${pv})`;
    expect(await coarse()).toEqual(folded);

    // Samples several per minute and out of order (two workers), across 5-minute boundaries.
    for (const s of [5, 12, 58, 61, 119, 64, 290, 301, 299, 610, 700, 2700, 2815, 2822, 2829, 2905]) {
      await recordOffsetSamples(
        db,
        [
          { pipelineVersionId: pv!, partition: 0, latestOffset: 1000 + s * 7, committedOffset: 900 + s * 6 },
          { pipelineVersionId: pv!, partition: 1, latestOffset: 50 + s, committedOffset: s % 2 ? null : s },
        ],
        at(s),
      );
    }
    // The 5-minute sample is the newest minute's (first) sample: what the migration derives from the minute rows.
    expect(
      await db.$queryRaw`
      SELECT bucket_start, partition, sampled_at, latest_offset, committed_offset FROM offset_samples
       WHERE pipeline_version_id = ${pv} AND grain_seconds = 300 ORDER BY bucket_start, partition`,
    ).toEqual(
      await db.$queryRaw`
      SELECT DISTINCT ON (date_bin('300 seconds', bucket_start, '2000-01-01'), partition) date_bin('300 seconds', bucket_start, '2000-01-01') AS bucket_start,
             partition, sampled_at, latest_offset, committed_offset
        FROM offset_samples m WHERE pipeline_version_id = ${pv} AND grain_seconds = 60 ORDER BY date_bin('300 seconds', m.bucket_start, '2000-01-01'), partition, m.bucket_start DESC`,
    );
    // 299 s came after 290 s from the same minute: the minute keeps 290 s, and so does its 5-minute bucket.
    expect(
      (
        await db.offsetSample.findFirst({
          where: { pipelineVersionId: pv!, grainSeconds: 300, bucketStart: at(0), partition: 0 },
        })
      )?.sampledAt,
    ).toEqual(at(290));

    // Every chart query at 30-minute and 5-minute steps over a range ending mid-bucket: the same rows
    // from the 5-minute grain (with the minutes of the last, partial bucket) as from the minute grain.
    for (const days of [1, 7]) {
      const b = bucketRange(range(2830 - days * 86_400, 2830));
      expect(b).toMatchObject({ stepSeconds: days === 1 ? 300 : 1800, grain: 300 });
      const minutes: TBucketing = { ...b, grain: 60 };
      for (const query of [
        queryBatchBuckets,
        queryExpectationBuckets,
        queryPartitionBuckets,
        queryOffsetBuckets,
        queryOffsetPoints,
      ] as const) {
        const fromMinutes = await query(db, [pv!], minutes);
        expect(fromMinutes.length).toBeGreaterThan(0);
        expect(await query(db, [pv!], b)).toEqual(fromMinutes);
      }
      // The batch after the range's end is in no bucket; the one at its end (2825 s) is.
      const rows = await queryBatchBuckets(db, [pv!], b);
      expect(rows.reduce((n, r) => n + r.batches, 0)).toBe(times.filter((t) => t < 2880).length);
    }
    // Range totals, from 5-minute, minute and 10-second buckets, equal batch_log summed over the same 10-second buckets.
    // [55 s, 2826 s) is the 10-second buckets starting in it: [60 s, 2830 s) of batch_log (59.999 s is out, 2825 s in).
    const [totals] = await queryRangeTotals(db, [pv!], at(55), at(2826));
    const exact = await db.$queryRaw<{ n: number; input: number }[]>`
      SELECT count(*)::int AS n, sum(input_rows)::float8 AS input FROM batch_log WHERE pipeline_version_id = ${pv} AND committed_at >= ${at(60)} AND committed_at < ${at(2830)}`;
    expect(exact[0]!.n).toBe(14);
    expect({ batches: totals!.batches, inputRows: totals!.input_rows }).toEqual({
      batches: exact[0]!.n,
      inputRows: exact[0]!.input,
    });
  });

  it("an output's own expectations count in the violations, under the output's name, the same folded or rebuilt", async () => {
    const [pv] = await pipelineWith("outputs-violations");
    const output = (name: string, expectations: Record<string, number>) => ({
      name,
      sink: `${name}_5m`,
      watermark: null,
      outcomes: {
        rows: 90,
        sink: 90,
        filtered: 0,
        late: 0,
        duplicate: 0,
        stale: 0,
        deadLetter: 0,
        dropped: {},
      },
      lateAccepted: 0,
      expectations,
      stateRows: 10,
      stateBytes: 400,
    });
    for (let b = 0; b < 6; b++)
      await commit(pv!, b, b * 4, {
        // Both outputs name an expectation alike; one output has none; a batch without outputs.
        ...(b === 5
          ? {}
          : {
              outputs: [
                output("fraud", { known_currency: 1 }),
                output("finance", { known_currency: 2 + b, amount_cap: b % 2 }),
                output("audit", {}),
              ],
            }),
      });
    const [totals] = await queryRangeTotals(db, [pv!], at(0), at(60));
    expect(totals!.violations).toEqual({
      known_type: 18,
      amount_present: 30,
      "fraud:known_currency": 5,
      "finance:known_currency": 2 + 3 + 4 + 5 + 6,
      "finance:amount_cap": 2,
    });
    // The Correctness signal counts them per input row.
    const signals = await getPipelineSignals(db, { pipeline: "outputs-violations", range: range(0, 60) });
    expect(signals!.correctness.violations).toBe(18 + 30 + 5 + 20 + 2);

    const folded =
      await db.$queryRaw`SELECT grain_seconds, bucket_start, violations FROM batch_rollup WHERE pipeline_version_id = ${pv} ORDER BY 1, 2`;
    await db.$executeRaw`SELECT sluice_rebuild_rollups(${pv})`;
    expect(
      await db.$queryRaw`SELECT grain_seconds, bucket_start, violations FROM batch_rollup WHERE pipeline_version_id = ${pv} ORDER BY 1, 2`,
    ).toEqual(folded);
  });

  it("a malformed progress record still commits; the rollup counts what it can read", async () => {
    const [pv] = await pipelineWith("malformed");
    await db.batchLog.create({
      data: {
        pipelineVersionId: pv!,
        batchId: 0,
        committedAt: at(3),
        inputRows: 7,
        sinkRows: 7,
        outcomes: { sink: 7 },
        progress: { sources: "not a list", durationMs: 12, latencyMs: [] },
      },
    });
    await db.batchLog.create({
      data: {
        pipelineVersionId: pv!,
        batchId: 1,
        committedAt: at(4),
        inputRows: 1,
        sinkRows: 1,
        outcomes: {},
        progress: { stateRows: "lots" },
      },
    });
    expect(await db.batchLog.count({ where: { pipelineVersionId: pv! } })).toBe(2);
    const s = (await findPipelineSeries(db, { pipeline: "malformed", range: range(0, 10) }))!;
    expect(s.points[0]).toMatchObject({ batches: 1, inputRows: 7, outcomes: { sink: 7 } });
  });
});

describe("signals, graph and drill-down", () => {
  it("the graph's edges add up to the input, and the three signals read against the targets", async () => {
    const [pv] = await pipelineWith("graph");
    for (let b = 0; b < 5; b++) await commit(pv!, b, b * 3);
    await db.checkpoint.create({
      data: {
        pipelineVersionId: pv!,
        lastBatchId: 4,
        endOffsets: { "0": 300, "1": 200 },
        eventTimeMax: { eventTime: at(-30).toISOString() },
      },
    });
    await recordOffsetSamples(
      db,
      [
        { pipelineVersionId: pv!, partition: 0, latestOffset: 900, committedOffset: 300 },
        { pipelineVersionId: pv!, partition: 1, latestOffset: 200, committedOffset: 200 },
        { pipelineVersionId: pv!, partition: 2, latestOffset: 50, committedOffset: null },
      ],
      at(14),
    );
    const s = (await getPipelineSignals(db, { pipeline: "graph", range: range(0, 20) }, at(20)))!;
    expect(s.totals).toMatchObject({
      batches: 5,
      inputRows: 500,
      sink: 400,
      duplicate: 30,
      quarantined: 20,
      deadLetter: 10,
      late: 25,
      droppedBy: { known_type: 15 },
      violations: { known_type: 15, amount_present: 25 },
    });
    expect(s.flow.balanced).toBe(true);
    expect(s.flow.input).toBe(500);
    const edge = (to: string) => s.flow.edges.find((e) => e.to === to)?.rows;
    expect([
      edge("decode"),
      edge("decode:dead-letter"),
      edge("contract"),
      edge("contract:quarantined"),
      edge("expectations"),
      edge("expectations:dropped:known_type"),
      edge("late"),
      edge("late:late"),
      edge("dedup"),
      edge("dedup:duplicate"),
      edge("sink"),
    ]).toEqual([500, 10, 490, 20, 470, 15, 455, 25, 430, 30, 400]);
    expect(s.flow.edges.filter((e) => e.leaves).reduce((n, e) => n + e.rows, 0) + edge("sink")!).toBe(500);
    expect(s.targets).toEqual({ freshness: "2m", freshnessMs: 120_000, violationRate: 0.01 });
    expect(s.freshness).toMatchObject({ ingestAgeMs: 8_500, eventTimeAgeMs: 50_000, overTarget: false });
    expect(s.completeness).toMatchObject({
      backlog: 650,
      lateShare: 0.05,
      deadLetterShare: 0.02,
      partitionsNotRead: [2],
      partitions: 3,
    });
    expect(s.correctness).toMatchObject({
      violationRate: 0.08,
      overTarget: true,
      quarantinedShare: 0.04,
      unbalancedBatches: 0,
    });

    const offsets = (await findPartitionOffsets(db, { pipeline: "graph" }, at(20)))!;
    expect(
      offsets.partitions.map((p) => [p.partition, p.committedOffset, p.latestOffset, p.lagEvents, p.idle]),
    ).toEqual([
      [0, 300, 900, 600, false],
      [1, 200, 200, 0, true],
      [2, null, 50, 50, null],
    ]);
  });

  it("drills into one batch: plan, offsets, outcomes, watermark before and after, dead letters; a failed batch shows its error", async () => {
    const [pv] = await pipelineWith("drill");
    const first = await commit(pv!, 0, 1);
    await commit(pv!, 1, 3, { preparedAhead: true });
    await db.offsetLog.create({
      data: { pipelineVersionId: pv!, batchId: 1, ranges: [{ partition: 0, from: 60, to: 120 }] },
    });
    await db.deadLetter.create({
      data: {
        pipelineVersionId: pv!,
        batchId: 1,
        outcome: "quarantined",
        reason: "x",
        topic: "t",
        partition: 0,
        offset: 70,
        raw: Buffer.from("x"),
      },
    });
    await db.batchFailure.create({
      data: {
        pipelineVersionId: pv!,
        batchId: 2,
        kind: "expectation",
        rule: "positive_amount",
        rowCount: 3,
        message: "batch 2 stopped by expectation",
      },
    });
    const d = (await getBatchDetail(db, { pipeline: "drill", batchId: 1 }))!;
    expect(d).toMatchObject({
      batchId: 1,
      plan: [{ partition: 0, from: 60, to: 120 }],
      watermarkBefore: new Date(first.watermark!),
      previousBatchId: 0,
      nextBatchId: null,
      deadLetters: [{ outcome: "quarantined", count: 1 }],
    });
    expect(d.committed).toMatchObject({ preparedAhead: true, latencyMs: { p50: 801 } });
    expect(d.committed!.partitions[0]).toMatchObject({ startOffset: 60, endOffset: 120, latestOffset: 150 });
    const failed = (await getBatchDetail(db, { pipeline: "drill", batchId: 2 }))!;
    expect(failed).toMatchObject({ committed: null, failures: [{ rule: "positive_amount", rowCount: 3 }] });
    expect(await getBatchDetail(db, { pipeline: "drill", batchId: 99 })).toBeNull();
  });

  it("the fleet: one row per pipeline, problems first — failed with its error's first line, lagging when the backlog keeps rising", async () => {
    const now = at(3600);
    const [stuck] = await pipelineWith("fleet-stuck");
    const [broken] = await pipelineWith("fleet-broken");
    const [fine] = await pipelineWith("fleet-fine");
    await db.pipelineRun.createMany({
      data: [
        { pipelineVersionId: stuck!, status: "paused", desiredState: "paused" },
        {
          pipelineVersionId: broken!,
          status: "failed",
          desiredState: "running",
          lastError: "batch 9 failed: connection refused\n    at Socket",
        },
        { pipelineVersionId: fine!, status: "running", desiredState: "running" },
      ],
    });
    for (let i = 0; i < 6; i++) {
      await recordOffsetSamples(
        db,
        [{ pipelineVersionId: stuck!, partition: 0, latestOffset: 1000 + i * 500, committedOffset: 1000 }],
        at(3600 - 60 + i * 10),
      );
      await recordOffsetSamples(
        db,
        [
          {
            pipelineVersionId: fine!,
            partition: 0,
            latestOffset: 1000 + i * 500,
            committedOffset: 1000 + i * 500 - 20,
          },
        ],
        at(3600 - 60 + i * 10),
      );
    }
    for (let b = 0; b < 6; b++) await commit(fine!, b, 3600 - 60 + b * 10);
    const fleet = await findFleet(db, now);
    const mine = fleet.filter((r) => r.name.startsWith("fleet-"));
    expect(mine.map((r) => [r.name, r.status])).toEqual([
      ["fleet-broken", "failed"],
      ["fleet-stuck", "lagging"],
      ["fleet-fine", "caught up"],
    ]);
    expect(mine[0]!.reason).toBe("batch 9 failed: connection refused");
    expect(mine[1]).toMatchObject({
      phase: "paused",
      backlog: 2500,
      backlogSeconds: null,
      reason: "backlog rising (2500 events waiting) while paused",
      since: at(3540),
    });
    expect(mine[0]!.since).toBeNull(); // failed without a recorded time
    const ok = mine[2]!;
    expect(ok.sparkline.t).toHaveLength(60);
    expect(ok.sparkline.processing.at(-1)).toBeCloseTo(600 / 60);
    expect(ok.processingRate).toBeCloseTo(600 / 120);
    expect(ok.inputRate).toBeCloseTo(50);
    expect(ok).toMatchObject({
      backlog: 20,
      deadLettersLastHour: 12,
      violationRate: 0.08,
      freshness: { ingestAgeMs: 10_500, targetMs: 120_000 },
    });
  });

  it("the fleet shows every version that is not stopped, each as a row of its own; stopped older versions are not rows", async () => {
    const [v1, v2, v3, v4] = await pipelineWith("fleet-beside", 4);
    await db.pipelineRun.createMany({
      data: [
        { pipelineVersionId: v1!, status: "stopped", desiredState: "stopped" },
        { pipelineVersionId: v2!, status: "running", desiredState: "running" },
        { pipelineVersionId: v3!, status: "paused", desiredState: "paused" },
        { pipelineVersionId: v4!, status: "running", desiredState: "running" },
      ],
    });
    const rows = (await findFleet(db, at(3600))).filter((r) => r.name === "fleet-beside");
    expect(
      rows.map((r) => [r.version, r.serving, r.phase]).sort((a, b) => Number(b[0]) - Number(a[0])),
    ).toEqual([
      [4, true, "running"],
      [3, false, "paused"],
      [2, false, "running"],
    ]);
    // A pipeline whose serving version was never started is still one row.
    await pipelineWith("fleet-never", 2);
    expect(
      (await findFleet(db, at(3600)))
        .filter((r) => r.name === "fleet-never")
        .map((r) => [r.version, r.serving]),
    ).toEqual([[2, true]]);
  });
});
