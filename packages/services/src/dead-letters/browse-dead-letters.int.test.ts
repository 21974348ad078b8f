// Browsing dead letters against real Postgres: every version of the pipeline, newest first, page by page
// without gaps or repeats; each filter selects exactly its rows (payload text matches bytes that are
// not UTF-8 at all without failing the query — the same condition discarding uses, proven here too);
// inspecting one shows its bytes as they were kept, and a row of another pipeline is not reachable.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { createTestDatabase, type TestDatabase, serveNewestVersion } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browseDeadLetters, hexLines, inspectDeadLetter } from "./browse-dead-letters";
import { discardDeadLetters } from "./discard-dead-letters";

let database: TestDatabase;
let db: PrismaClient;
const who = { actorUserId: null, actor: "operator@sluice.local", from: { origin: "web" as const } };
const NOT_UTF8 = Buffer.from([0xff, 0xfe, 0x41, 0x42, 0x00, 0x7b]);
let otherPipelineRow: number;

beforeAll(async () => {
  database = await createTestDatabase("browse_dl");
  db = createPrismaClient(database.url);
  const team = await db.team.create({ data: { slug: "t", name: "T" } });
  const p = await db.pipeline.create({
    data: {
      name: "dl",
      ownerTeamId: team.id,
      versions: {
        create: [
          { version: 1, spec: {}, specHash: "h1" },
          { version: 2, spec: {}, specHash: "h2" },
        ],
      },
    },
    include: { versions: { orderBy: { version: "asc" } } },
  });
  await serveNewestVersion(db, p.id);
  const [v1, v2] = p.versions.map((v) => v.id);
  // 30 quarantined rows of version 1 (before a schema change), then version 2's rows.
  for (let i = 0; i < 30; i++) {
    const raw = JSON.stringify({ event_id: `e-${i}`, amount: "12,50" });
    await db.deadLetter.create({
      data: {
        pipelineVersionId: v1!,
        batchId: i,
        topic: "t",
        partition: i % 3,
        offset: i,
        outcome: "quarantined",
        reason: 'field "amount" should be decimal, got "12,50"',
        raw: Buffer.from(raw),
        payload: JSON.parse(raw),
      },
    });
  }
  await db.deadLetter.create({
    data: {
      pipelineVersionId: v2!,
      batchId: 40,
      topic: "t",
      partition: 0,
      offset: 100,
      outcome: "dead_letter",
      reason: "not UTF-8 JSON",
      raw: NOT_UTF8,
    },
  });
  await db.deadLetter.create({
    data: {
      pipelineVersionId: v2!,
      batchId: 41,
      topic: "t",
      partition: 1,
      offset: 101,
      outcome: "late",
      reason: "event time behind the watermark",
      raw: Buffer.from('{"event_id":"Late-1"}'),
      payload: { event_id: "Late-1" },
    },
  });
  const other = await db.pipeline.create({
    data: {
      name: "other",
      ownerTeamId: team.id,
      versions: { create: { version: 1, spec: {}, specHash: "o" } },
    },
    include: { versions: true },
  });
  await serveNewestVersion(db, other.id);
  otherPipelineRow = Number(
    (
      await db.deadLetter.create({
        data: {
          pipelineVersionId: other.versions[0]!.id,
          batchId: 0,
          topic: "t",
          partition: 0,
          offset: 0,
          outcome: "late",
          reason: "late",
          raw: Buffer.from("{}"),
        },
      })
    ).id,
  );
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

describe("browseDeadLetters", () => {
  it("pages through every version's rows newest first, each row once", async () => {
    const seen: number[] = [];
    let before: number | undefined;
    for (;;) {
      const page = (await browseDeadLetters(db, {
        pipeline: "dl",
        limit: 7,
        ...(before ? { before } : {}),
      }))!;
      expect(page.matching).toBe(32);
      seen.push(...page.rows.map((r) => r.id));
      if (page.nextBefore === null) break;
      before = page.nextBefore;
    }
    expect(seen).toHaveLength(32);
    expect(new Set(seen).size).toBe(32);
    expect([...seen].sort((a, b) => b - a)).toEqual(seen);
    expect(seen).not.toContain(otherPipelineRow);
    const first = (await browseDeadLetters(db, { pipeline: "dl", limit: 2 }))!.rows;
    expect(first.map((r) => [r.version, r.outcome, r.offset])).toEqual([
      [2, "late", 101],
      [2, "dead_letter", 100],
    ]);
    expect(first[0]!.preview).toContain("Late-1");
  });

  it("selects exactly the rows of each filter; payload text matches JSON case-insensitively and raw bytes exactly", async () => {
    const ids = async (f: Record<string, unknown>) =>
      (await browseDeadLetters(db, { pipeline: "dl", limit: 200, ...f }))!.rows
        .map((r) => r.offset)
        .sort((a, b) => a - b);
    expect(await ids({ outcome: "quarantined", partition: 1 })).toEqual([
      1, 4, 7, 10, 13, 16, 19, 22, 25, 28,
    ]);
    expect(await ids({ text: "late-1" })).toEqual([101]);
    expect(await ids({ text: "AB" })).toEqual([100]);
    expect(await ids({ text: "e-2", outcome: "quarantined" })).toEqual([
      2, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
    ]);
    expect(await ids({ reasonContains: "WATERMARK" })).toEqual([101]);
    expect(await ids({ text: "%" })).toEqual([]);
    expect(await browseDeadLetters(db, { pipeline: "nope" })).toBeNull();
  });

  it("discards by payload text over rows that are not UTF-8, across versions", async () => {
    expect(
      await discardDeadLetters(db, who, { pipeline: "dl", text: "e-29", reason: "checked" }),
    ).toMatchObject({ discarded: 1 });
    const page = (await browseDeadLetters(db, { pipeline: "dl", text: "e-29" }))!;
    expect(page.rows[0]!.resolution).toMatchObject({
      action: "discarded",
      actor: "operator@sluice.local",
      reason: "checked",
    });
  });
});

describe("inspectDeadLetter", () => {
  it("shows the kept bytes as hex and text, whether they were UTF-8, and the decoded payload", async () => {
    const row = (await browseDeadLetters(db, { pipeline: "dl", outcome: "dead_letter" }))!.rows[0]!;
    const d = (await inspectDeadLetter(db, { pipeline: "dl", id: row.id }))!;
    expect(d).toMatchObject({
      bytes: 6,
      validUtf8: false,
      payload: null,
      version: 2,
      offset: 100,
      outcome: "dead_letter",
    });
    expect(d.hex).toEqual([`00000000  ${"ff fe 41 42 00 7b".padEnd(47)}  ..AB.{`]);
    const late = (await browseDeadLetters(db, { pipeline: "dl", outcome: "late" }))!.rows[0]!;
    expect(await inspectDeadLetter(db, { pipeline: "dl", id: late.id })).toMatchObject({
      validUtf8: true,
      text: '{"event_id":"Late-1"}',
      payload: { event_id: "Late-1" },
    });
    expect(await inspectDeadLetter(db, { pipeline: "dl", id: otherPipelineRow })).toBeNull();
  });

  it("lays out 16 bytes a line with the offset", () => {
    const lines = hexLines(Buffer.from("0123456789abcdefXY"));
    expect(lines).toEqual([
      "00000000  30 31 32 33 34 35 36 37 38 39 61 62 63 64 65 66  0123456789abcdef",
      `00000010  ${"58 59".padEnd(47)}  XY`,
    ]);
  });
});
