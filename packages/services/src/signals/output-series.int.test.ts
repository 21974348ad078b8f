// Per-output series against real Postgres: progress records with several outputs committed into
// batch_log (the trigger folds them into output_rollup in the same transaction), read back per output
// and compared with the records themselves; the rebuild from batch_log gives the same rows.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import type { BatchProgress } from "@sluice/engine";
import { createTestDatabase, serveNewestVersion, type TestDatabase } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findPipelineSeries } from "./find-pipeline-series";
import { commitOutputsBatch, outputProgress } from "./progress-records.test-helpers";

let database: TestDatabase;
let db: PrismaClient;
let teamId: string;

beforeAll(async () => {
  database = await createTestDatabase("output_series");
  db = createPrismaClient(database.url);
  teamId = (await db.team.create({ data: { slug: "payments-data", name: "Payments Data" } })).id;
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

const T0 = Date.parse("2026-12-03T10:00:00.000Z");
const at = (seconds: number) => new Date(T0 + seconds * 1000);

async function pipeline(name: string): Promise<string> {
  const p = await db.pipeline.create({ data: { name, ownerTeamId: teamId } });
  await db.pipelineVersion.create({
    data: { pipelineId: p.id, version: 1, spec: { name }, specHash: name, createdAt: at(-3600) },
  });
  return serveNewestVersion(db, p.id);
}

/** Batches every 4 s for 100 s: fraud gets late rows in some, finance never; state grows differently. */
async function commitSettlements(pv: string): Promise<BatchProgress[]> {
  const records: BatchProgress[] = [];
  for (let b = 0; b < 25; b++) {
    const outputs =
      b === 7
        ? undefined // a batch whose record lists no outputs folds nothing for them
        : [
            outputProgress("fraud", {
              rows: 100,
              late: b % 3 === 0 ? 10 + b : 0,
              stateRows: 50 + b,
              watermark: at(b * 4 - 1200),
            }),
            outputProgress("finance", {
              rows: 100,
              stateRows: 1000 + 10 * b,
              watermark: b === 3 ? null : at(b * 4 - 600),
            }),
          ];
    records.push(await commitOutputsBatch(db, pv, b, at(b * 4 + 0.5), outputs));
  }
  return records;
}

describe("per-output series", () => {
  it("each output's written, late rows, state and watermark lag per bucket are its records'", async () => {
    const pv = await pipeline("settlement-views");
    const records = await commitSettlements(pv);
    const s = (await findPipelineSeries(db, {
      pipeline: "settlement-views",
      range: { from: at(0), to: at(100) },
    }))!;
    expect(s.stepSeconds).toBe(10);
    expect(s.outputs.map((o) => o.name)).toEqual(["finance", "fraud"]);
    for (const o of s.outputs) {
      expect(o.points.map((p) => p.t)).toEqual(s.points.map((p) => p.t));
      o.points.forEach((point, i) => {
        const from = point.t.getTime();
        const inBucket = records.filter(
          (r) => Date.parse(r.timestamp) >= from && Date.parse(r.timestamp) < from + 10_000 && r.outputs,
        );
        const mine = inBucket.map((r) => r.outputs!.find((x) => x.name === o.name)!);
        const last = mine.at(-1);
        expect(point, `${o.name} bucket ${i}`).toEqual({
          t: point.t,
          batches: mine.length,
          rows: mine.reduce((n, x) => n + x.outcomes.rows, 0),
          written: mine.reduce((n, x) => n + x.outcomes.sink, 0),
          late: mine.reduce((n, x) => n + x.outcomes.late, 0),
          lateAccepted: 0,
          stateRows: last ? last.stateRows : null,
          stateBytes: last ? last.stateBytes : null,
          watermarkLagMs: last?.watermark
            ? Date.parse(inBucket.at(-1)!.timestamp) - Date.parse(last.watermark)
            : null,
        });
      });
    }
    const fraud = s.outputs.find((o) => o.name === "fraud")!;
    const finance = s.outputs.find((o) => o.name === "finance")!;
    expect(fraud.points.reduce((n, p) => n + p.late, 0)).toBe(
      [0, 3, 6, 9, 12, 15, 18, 21, 24].reduce((n, b) => n + 10 + b, 0),
    );
    expect(finance.points.reduce((n, p) => n + p.late, 0)).toBe(0);
    // The 7th batch listed no outputs: its bucket counts one batch less per output than the pipeline.
    const seventh = s.points.findIndex(
      (p) => p.firstBatchId !== null && p.firstBatchId <= 7 && p.lastBatchId! >= 7,
    );
    expect(fraud.points[seventh]!.batches).toBe(s.points[seventh]!.batches - 1);
  });

  it("a week's range reads the 5-minute grain and loses no row", async () => {
    const pv = await pipeline("settlement-week");
    await commitSettlements(pv);
    const s = (await findPipelineSeries(db, {
      pipeline: "settlement-week",
      range: { from: at(-6 * 86_400), to: at(86_400) },
    }))!;
    expect(s.stepSeconds).toBe(1800);
    const fraud = s.outputs.find((o) => o.name === "fraud")!;
    expect(fraud.points.reduce((n, p) => n + p.written, 0)).toBe(
      24 * 100 - [0, 3, 6, 9, 12, 15, 18, 21, 24].reduce((n, b) => n + 10 + b, 0),
    );
    expect(fraud.points.reduce((n, p) => n + p.batches, 0)).toBe(24);
    expect(fraud.points.find((p) => p.batches > 0)!.stateRows).toBe(50 + 24);
  });

  it("the trigger's rows equal sluice_rebuild_rollups' from batch_log, at every grain", async () => {
    const pv = await pipeline("settlement-rebuild");
    await commitSettlements(pv);
    const snapshot = () =>
      db.$queryRaw<
        unknown[]
      >`SELECT * FROM output_rollup WHERE pipeline_version_id = ${pv} ORDER BY grain_seconds, bucket_start, output`;
    const folded = await snapshot();
    expect(folded.length).toBe(2 * (10 + 2 + 1));
    await db.$executeRaw`DELETE FROM output_rollup WHERE pipeline_version_id = ${pv}`;
    await db.$executeRaw`SELECT sluice_rebuild_rollups(${pv})`;
    expect(await snapshot()).toEqual(folded);
  });

  it("a pipeline whose records have no outputs has no output series", async () => {
    const pv = await pipeline("single-sink");
    for (let b = 0; b < 3; b++) await commitOutputsBatch(db, pv, b, at(b * 4), undefined);
    const s = (await findPipelineSeries(db, {
      pipeline: "single-sink",
      range: { from: at(0), to: at(30) },
    }))!;
    expect(s.points.reduce((n, p) => n + p.batches, 0)).toBe(3);
    expect(s.outputs).toEqual([]);
  });
});
