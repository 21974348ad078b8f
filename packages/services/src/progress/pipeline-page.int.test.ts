// What the console's pipeline page reads, against real Postgres: the pipeline and its run state, the
// engine's progress records (including each partition's event-time clock and whether it is idle), and
// the dead letters grouped by reason. The progress rows are typed as the engine's BatchProgress, so a
// change to the record's shape shows up here.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import type { BatchProgress } from "@sluice/engine";
import { createTestDatabase, type TestDatabase, serveNewestVersion } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeDeadLetters } from "../dead-letters/summarize-dead-letters";
import { getPipelineDetail } from "../pipelines/get-pipeline-detail";
import { findBatchProgress } from "./find-batch-progress";

let database: TestDatabase;
let db: PrismaClient;
let teamId: string;

beforeAll(async () => {
  database = await createTestDatabase("pipeline_page");
  db = createPrismaClient(database.url);
  teamId = (await db.team.create({ data: { slug: "payments-data", name: "Payments Data" } })).id;
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

const spec = (name: string) => ({
  name,
  source: { kafka: { topic: "payments", startingOffsets: "earliest" } },
  eventTime: { column: "event_time", watermarkDelay: "6h" },
});

/** A pipeline with versions 1..`versions`; returns the version ids, oldest first. */
async function pipelineWith(name: string, versions: number): Promise<string[]> {
  const p = await db.pipeline.create({
    data: { name, ownerTeamId: teamId, description: `${name} for the test` },
  });
  const ids: string[] = [];
  for (let version = 1; version <= versions; version++) {
    ids.push(
      (
        await db.pipelineVersion.create({
          data: { pipelineId: p.id, version, spec: spec(name), specHash: `${name}-${version}` },
        })
      ).id,
    );
  }
  if (versions > 0) await serveNewestVersion(db, p.id);
  return ids;
}

const outcomes = (
  sink: number,
  over: Partial<BatchProgress["outcomes"]> = {},
): BatchProgress["outcomes"] => ({
  sink,
  duplicate: 0,
  filtered: 0,
  quarantined: 0,
  deadLetter: 0,
  late: 0,
  stale: 0,
  dropped: {},
  ...over,
});

function progress(
  pipelineVersionId: string,
  batchId: number,
  over: Partial<BatchProgress> = {},
): BatchProgress {
  return {
    batchId,
    pipelineVersionId,
    timestamp: new Date(Date.UTC(2025, 0, 1, 2, 0, batchId)).toISOString(),
    inputRows: 100,
    inputRowsPerSecond: 50,
    processedRowsPerSecond: 400,
    durationMs: { plan: 2, read: 100, process: 80, commit: 68, total: 250 },
    sources: [
      {
        partition: 0,
        startOffset: batchId * 50,
        endOffset: batchId * 50 + 50,
        latestOffset: batchId * 50 + 900,
      },
      {
        partition: 1,
        startOffset: batchId * 50,
        endOffset: batchId * 50 + 50,
        latestOffset: batchId * 50 + 50,
      },
    ],
    backlog: 850,
    skippedOffsets: {},
    watermark: "2025-01-01T01:50:00.000Z",
    eventTimeMax: "2025-01-01T01:59:59.000Z",
    stateRows: 1200,
    stateBytes: 48_000,
    outcomes: outcomes(100),
    expectations: {},
    replayed: false,
    ...over,
  };
}

async function commitBatch(pipelineVersionId: string, p: BatchProgress): Promise<void> {
  await db.batchLog.create({
    data: {
      pipelineVersionId,
      batchId: p.batchId,
      inputRows: p.inputRows,
      sinkRows: p.outcomes.sink,
      outcomes: p.outcomes as object,
      progress: p as object,
    },
  });
}

let offset = 0;
async function deadLetters(
  pipelineVersionId: string,
  outcome: string,
  reasons: string[],
  partition = 0,
): Promise<void> {
  await db.deadLetter.createMany({
    data: reasons.map((reason) => ({
      pipelineVersionId,
      batchId: 1,
      outcome,
      reason,
      topic: "payments",
      partition,
      offset: offset++,
      raw: Buffer.from("x"),
      ingestTime: new Date(Date.UTC(2025, 0, 1, 2, 0, 0)),
    })),
  });
}

describe("getPipelineDetail", () => {
  it("is null for an unknown pipeline", async () => {
    expect(await getPipelineDetail(db, { pipeline: "no-such-pipeline" })).toBeNull();
  });

  it("shows the latest version, what it reads, its watermark settings and no run state before it is started", async () => {
    await pipelineWith("never-run", 2);
    const detail = await getPipelineDetail(db, { pipeline: "never-run" });
    expect(detail).toMatchObject({
      name: "never-run",
      description: "never-run for the test",
      ownerTeam: { slug: "payments-data", name: "Payments Data" },
      versionCount: 2,
      servingVersion: 2,
      version: {
        version: 2,
        serving: true,
        supersededBy: null,
        topic: "payments",
        partitionGroups: 1,
        eventTime: { column: "event_time", watermarkDelay: "6h", idleTimeout: "1m" },
      },
      run: null,
    });
  });

  it("has the run state of the latest version, without the failure's sample rows", async () => {
    const [, v2] = await pipelineWith("running-one", 2);
    await db.pipelineRun.create({
      data: {
        pipelineVersionId: v2!,
        status: "running",
        desiredState: "paused",
        failureSample: [{ big: "row" }],
      },
    });
    const detail = await getPipelineDetail(db, { pipeline: "running-one" });
    expect(detail?.run).toMatchObject({
      pipelineVersionId: v2,
      status: "running",
      phase: "pausing",
      batchInFlight: null,
    });
    expect(detail?.run).not.toHaveProperty("failureSample");
  });

  it("shows the version asked for with that version's run state, never another one's", async () => {
    const [v1, v2] = await pipelineWith("two-running", 2);
    await db.pipelineVersion.update({ where: { id: v1! }, data: { supersededById: v2! } });
    await db.pipelineRun.create({
      data: { pipelineVersionId: v1!, status: "stopped", desiredState: "stopped" },
    });
    await db.pipelineRun.create({
      data: { pipelineVersionId: v2!, status: "running", desiredState: "running" },
    });
    expect(await getPipelineDetail(db, { pipeline: "two-running", version: 1 })).toMatchObject({
      servingVersion: 2,
      version: { id: v1, version: 1, serving: false, supersededBy: 2 },
      run: { pipelineVersionId: v1, phase: "stopped" },
    });
    expect(await getPipelineDetail(db, { pipeline: "two-running" })).toMatchObject({
      version: { id: v2, version: 2, serving: true, supersededBy: null },
      run: { pipelineVersionId: v2, phase: "running" },
    });
    expect(await getPipelineDetail(db, { pipeline: "two-running", version: 9 })).toMatchObject({
      servingVersion: 2,
      version: null,
      run: null,
    });
  });

  it("a pipeline without a version has no latest version", async () => {
    await db.pipeline.create({ data: { name: "no-version", ownerTeamId: teamId } });
    expect(await getPipelineDetail(db, { pipeline: "no-version" })).toMatchObject({
      versionCount: 0,
      servingVersion: null,
      version: null,
      run: null,
    });
    expect(await findBatchProgress(db, { pipeline: "no-version" })).toEqual({
      pipeline: "no-version",
      version: null,
      latest: null,
      batches: [],
    });
  });
});

describe("findBatchProgress", () => {
  it("is null for an unknown pipeline and empty for a version that never committed", async () => {
    expect(await findBatchProgress(db, { pipeline: "no-such-pipeline" })).toBeNull();
    expect(await findBatchProgress(db, { pipeline: "never-run" })).toEqual({
      pipeline: "never-run",
      version: 2,
      latest: null,
      batches: [],
    });
  });

  it("the newest record in full, with each partition's event time, last data and idleness; the latest version only", async () => {
    const [v1, v2] = await pipelineWith("ledger", 2);
    await commitBatch(v1!, progress(v1!, 99)); // an older version's batches are not this version's
    // An early record, written before `stale`, `preparedAhead` and `partitionEventTime` existed.
    const old = progress(v2!, 1) as unknown as Record<string, unknown>;
    delete old.partitionEventTime;
    delete (old.outcomes as Record<string, unknown>).stale;
    await commitBatch(v2!, old as unknown as BatchProgress);
    for (let b = 2; b <= 24; b++)
      await commitBatch(
        v2!,
        progress(v2!, b, {
          preparedAhead: b % 2 === 0,
          replayed: b === 7,
          // A partition group's batch (source.kafka.parallelism) says which group.
          ...(b === 9 ? { group: { no: 1, of: 2 } } : {}),
        }),
      );
    await commitBatch(
      v2!,
      progress(v2!, 25, {
        inputRows: 140,
        outcomes: outcomes(100, {
          duplicate: 12,
          filtered: 3,
          quarantined: 4,
          deadLetter: 5,
          late: 6,
          stale: 1,
          dropped: { known_type: 9 },
        }),
        expectations: { known_type: 9, amount_present: 2 },
        lateAccepted: 7,
        preparedAhead: true,
        partitionEventTime: [
          {
            partition: 0,
            eventTimeMax: "2025-01-01T01:59:59.000Z",
            lastDataAt: "2025-01-01T02:00:25.000Z",
            idle: false,
          },
          {
            partition: 1,
            eventTimeMax: "2025-01-01T00:10:00.000Z",
            lastDataAt: "2025-01-01T01:30:00.000Z",
            idle: true,
          },
          {
            partition: 2,
            eventTimeMax: "2025-01-01T01:55:00.000Z",
            lastDataAt: "2025-01-01T02:00:20.000Z",
            idle: false,
          },
        ],
        operator: { kind: "window", finalized: 3 },
      }),
    );

    const found = await findBatchProgress(db, { pipeline: "ledger" });
    expect(found?.version).toBe(2);
    expect(found?.latest).toMatchObject({
      batchId: 25,
      timestamp: new Date("2025-01-01T02:00:25.000Z"),
      inputRows: 140,
      inputRowsPerSecond: 50,
      processedRowsPerSecond: 400,
      durationMs: { plan: 2, read: 100, process: 80, commit: 68, total: 250 },
      backlog: 850,
      watermark: new Date("2025-01-01T01:50:00.000Z"),
      eventTimeMax: new Date("2025-01-01T01:59:59.000Z"),
      stateRows: 1200,
      stateBytes: 48_000,
      outcomes: {
        sink: 100,
        duplicate: 12,
        filtered: 3,
        quarantined: 4,
        deadLetter: 5,
        late: 6,
        stale: 1,
        dropped: { known_type: 9 },
      },
      expectations: { known_type: 9, amount_present: 2 },
      lateAccepted: 7,
      preparedAhead: true,
      replayed: false,
      operator: { kind: "window", finalized: 3 },
    });
    expect(found?.latest?.committedAt).toBeInstanceOf(Date);
    // Offsets read and clocks merged per partition; partition 2 sent nothing in this batch.
    expect(found?.latest?.partitions).toEqual([
      {
        partition: 0,
        startOffset: 1250,
        endOffset: 1300,
        latestOffset: 2150,
        eventTimeMax: new Date("2025-01-01T01:59:59.000Z"),
        lastDataAt: new Date("2025-01-01T02:00:25.000Z"),
        idle: false,
      },
      {
        partition: 1,
        startOffset: 1250,
        endOffset: 1300,
        latestOffset: 1300,
        eventTimeMax: new Date("2025-01-01T00:10:00.000Z"),
        lastDataAt: new Date("2025-01-01T01:30:00.000Z"),
        idle: true,
      },
      {
        partition: 2,
        startOffset: null,
        endOffset: null,
        latestOffset: null,
        eventTimeMax: new Date("2025-01-01T01:55:00.000Z"),
        lastDataAt: new Date("2025-01-01T02:00:20.000Z"),
        idle: false,
      },
    ]);

    // The last 20, newest first, one row each.
    expect(found?.batches.map((b) => b.batchId)).toEqual(Array.from({ length: 20 }, (_, i) => 25 - i));
    expect(found?.batches[0]).toEqual({
      batchId: 25,
      committedAt: expect.any(Date),
      inputRows: 140,
      durationMs: 250,
      sink: 100,
      duplicate: 12,
      quarantined: 4,
      deadLetter: 5,
      late: 6,
      backlog: 850,
      watermark: new Date("2025-01-01T01:50:00.000Z"),
      preparedAhead: true,
      replayed: false,
      group: null,
      deadLetterReplay: null,
      // A ledger: one sink, no join.
      outputs: [],
      joinWaiting: null,
    });
    expect(found?.batches.find((b) => b.batchId === 7)).toMatchObject({
      replayed: true,
      preparedAhead: false,
    });
    expect(found?.batches.find((b) => b.batchId === 8)).toMatchObject({
      replayed: false,
      preparedAhead: true,
      group: null,
    });
    expect(found?.batches.find((b) => b.batchId === 9)?.group).toEqual({ no: 1, of: 2 });

    // The early record still reads, with what it has.
    const all = await findBatchProgress(db, { pipeline: "ledger", limit: 100 });
    expect(all?.batches).toHaveLength(25);
    expect(all?.batches.at(-1)).toMatchObject({ batchId: 1, sink: 100, preparedAhead: false, backlog: 850 });
  });

  it("a record that is not what the engine writes still shows its batch from the columns", async () => {
    const [v1] = await pipelineWith("odd-record", 1);
    await db.batchLog.create({
      data: {
        pipelineVersionId: v1!,
        batchId: 0,
        inputRows: 7,
        sinkRows: 7,
        outcomes: { sink: 7 },
        progress: "not an object",
      },
    });
    const found = await findBatchProgress(db, { pipeline: "odd-record" });
    expect(found?.latest).toMatchObject({
      batchId: 0,
      inputRows: 7,
      outcomes: { sink: 7, duplicate: 0, stale: 0, dropped: {} },
      partitions: [],
      watermark: null,
      durationMs: null,
    });
  });
});

describe("summarizeDeadLetters", () => {
  it("is null for an unknown pipeline and all zero for a version without dead letters", async () => {
    expect(await summarizeDeadLetters(db, { pipeline: "no-such-pipeline" })).toBeNull();
    expect(await summarizeDeadLetters(db, { pipeline: "never-run" })).toEqual({
      pipeline: "never-run",
      version: 2,
      counts: { dead_letter: 0, quarantined: 0, late: 0, total: 0 },
      reasons: [],
      reasonGroups: 0,
      reasonSample: 5_000,
      rows: [],
    });
  });

  it("counts by outcome, groups reasons by what they say (not the row's own values), most frequent first", async () => {
    const [v1, v2] = await pipelineWith("payments", 2);
    await deadLetters(v1!, "dead_letter", ["empty payload (tombstone or null value)"]); // another version
    const late = (i: number) =>
      `event time 2025-01-01T00:0${i}:00.000Z is behind the watermark 2025-01-01T01:0${i}:00.000Z`;
    await deadLetters(v2!, "late", [1, 2, 3, 4, 5, 6].map(late), 1);
    await deadLetters(v2!, "dead_letter", [
      `not valid JSON: Unexpected token 'c', "card_payme"... is not valid JSON`,
      `not valid JSON: Unexpected token '<', "<payment id="x"/>" is not valid JSON`,
      "not valid JSON: Unterminated string in JSON at position 21",
      "not valid JSON: Unterminated string in JSON at position 57",
      "not valid JSON: Unterminated string in JSON at position 8",
      "not valid JSON: Unterminated string in JSON at position 90",
      "empty payload (tombstone or null value)",
    ]);
    await deadLetters(v2!, "quarantined", [
      `field "amount" should be decimal, got "12,50"`,
      `field "amount" should be decimal, got true`,
      `field "amount" should be decimal, got {"value":1}`,
      `field "seq" should be int, got "x"`,
      `required field "merchant_id" is missing`,
    ]);
    // Nine more reasons seen once each: 16 groups in all.
    await deadLetters(
      v2!,
      "quarantined",
      Array.from({ length: 9 }, (_, i) => `unknown field "extra_${i}" (contract has no such field)`),
    );

    const s = await summarizeDeadLetters(db, { pipeline: "payments" });
    expect(s?.version).toBe(2);
    expect(s?.counts).toEqual({ dead_letter: 7, quarantined: 14, late: 6, total: 27 });
    expect(s?.reasonGroups).toBe(16);
    expect(s?.reasons).toHaveLength(10);
    expect(s?.reasons.slice(0, 4).map((r) => [r.outcome, r.reason, r.count])).toEqual([
      ["late", "event time <time> is behind the watermark <time>", 6],
      ["dead_letter", "not valid JSON: Unterminated string in JSON at position <n>", 4],
      ["quarantined", `field "amount" should be decimal, got …`, 3],
      ["dead_letter", "not valid JSON: Unexpected token … is not valid JSON", 2],
    ]);
    // Each group keeps one reason as the engine wrote it.
    expect(s?.reasons[0]?.example).toBe(late(1));
    expect(s?.reasons[2]?.example).toMatch(/^field "amount" should be decimal, got /);
    expect(s?.reasons[0]?.lastAt).toBeInstanceOf(Date);
    // Groups of one are listed by outcome and text: "empty payload", then the contract's.
    expect(s?.reasons.slice(4, 7).map((r) => [r.outcome, r.reason, r.count])).toEqual([
      ["dead_letter", "empty payload (tombstone or null value)", 1],
      ["quarantined", `field "seq" should be int, got …`, 1],
      ["quarantined", `required field "merchant_id" is missing`, 1],
    ]);

    const all = await summarizeDeadLetters(db, { pipeline: "payments", reasons: 100 });
    expect(all?.reasons).toHaveLength(16);
    expect(all?.reasons.reduce((n, r) => n + r.count, 0)).toBe(27);
  });

  it("groups reasons over the newest rows of each outcome only; the counts stay exact", async () => {
    const s = await summarizeDeadLetters(db, { pipeline: "payments", reasons: 100, sample: 2 });
    expect(s?.counts).toEqual({ dead_letter: 7, quarantined: 14, late: 6, total: 27 });
    expect(s?.reasonSample).toBe(2);
    expect(s?.reasons.reduce((n, r) => n + r.count, 0)).toBe(6);
    expect(s?.reasons.filter((r) => r.outcome === "quarantined").map((r) => r.reason)).toEqual([
      `unknown field "extra_7" (contract has no such field)`,
      `unknown field "extra_8" (contract has no such field)`,
    ]);
  });

  it("lists the newest rows with partition, offset, outcome, reason and ingest time, without the raw bytes", async () => {
    const s = await summarizeDeadLetters(db, { pipeline: "payments", rows: 3 });
    expect(s?.rows).toHaveLength(3);
    expect(s?.rows[0]).toEqual({
      id: expect.any(Number),
      batchId: 1,
      outcome: "quarantined",
      reason: `unknown field "extra_8" (contract has no such field)`,
      partition: 0,
      offset: expect.any(Number),
      key: null,
      ingestTime: new Date("2025-01-01T02:00:00.000Z"),
      createdAt: expect.any(Date),
    });
    expect(s!.rows[0]!.offset).toBeGreaterThan(s!.rows[1]!.offset);
    expect((await summarizeDeadLetters(db, { pipeline: "payments" }))?.rows).toHaveLength(20);
  });
});
