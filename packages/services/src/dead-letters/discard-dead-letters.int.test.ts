// Discarding dead letters: only the rows the filters select (outcome, reason text, partition, payload
// text — typed % and _ match literally), once (a second discard resolves nothing), the rows themselves
// kept, an audit event with the filter and count; no filter at all is refused naming the field.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { createTestDatabase, type TestDatabase, serveNewestVersion } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discardDeadLetters } from "./discard-dead-letters";

let database: TestDatabase;
let db: PrismaClient;
const who = { actorUserId: null, actor: "operator@sluice.local", from: { origin: "web" as const } };

beforeAll(async () => {
  database = await createTestDatabase("discard_dl");
  db = createPrismaClient(database.url);
  const team = await db.team.create({ data: { slug: "t", name: "T" } });
  const p = await db.pipeline.create({
    data: { name: "dl", ownerTeamId: team.id, versions: { create: { version: 1, spec: {}, specHash: "h" } } },
    include: { versions: true },
  });
  await serveNewestVersion(db, p.id);
  const v = p.versions[0]!.id;
  const rows = [
    {
      outcome: "dead_letter",
      reason: "Unexpected token 'c' is not valid JSON",
      partition: 0,
      raw: "card_payment",
    },
    {
      outcome: "dead_letter",
      reason: "Unexpected end of JSON input",
      partition: 1,
      raw: '{"event_id":"e-100%',
    },
    {
      outcome: "quarantined",
      reason: 'field "amount" should be decimal, got "12,50"',
      partition: 0,
      raw: '{"amount":"12,50"}',
    },
    { outcome: "late", reason: "event time behind the watermark", partition: 2, raw: '{"event_id":"e_7"}' },
  ];
  for (const [i, r] of rows.entries())
    await db.deadLetter.create({
      data: { pipelineVersionId: v, batchId: 0, topic: "t", offset: i, ...r, raw: Buffer.from(r.raw) },
    });
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

describe("discardDeadLetters", () => {
  it("discards exactly the rows the filters select, once; the dead letters stay", async () => {
    expect(
      await discardDeadLetters(db, who, {
        pipeline: "dl",
        outcome: "dead_letter",
        reasonContains: "not valid json",
        reason: "producer bug, fixed",
      }),
    ).toEqual({ discarded: 1, alreadyResolved: 0, more: false });
    expect(
      await discardDeadLetters(db, who, { pipeline: "dl", outcome: "dead_letter", reason: "all of them" }),
    ).toEqual({ discarded: 1, alreadyResolved: 1, more: false });
    expect(
      await discardDeadLetters(db, who, { pipeline: "dl", outcome: "dead_letter", reason: "again" }),
    ).toEqual({ discarded: 0, alreadyResolved: 2, more: false });
    expect(await db.deadLetter.count()).toBe(4);
    const events = await db.auditEvent.findMany({
      where: { action: "deadletter.discard" },
      orderBy: { id: "asc" },
    });
    expect(events.map((e) => [e.reason, (e.after as { discarded: number }).discarded])).toEqual([
      ["producer bug, fixed", 1],
      ["all of them", 1],
    ]);
  });

  it("matches typed % and _ literally in the payload text", async () => {
    expect(
      await discardDeadLetters(db, who, { pipeline: "dl", text: "e_7", reason: "late, fine" }),
    ).toMatchObject({ discarded: 1 });
    expect(
      await discardDeadLetters(db, who, {
        pipeline: "dl",
        text: "%",
        reason: "nothing has a percent but one",
      }),
    ).toMatchObject({ discarded: 0, alreadyResolved: 1 });
    expect(await db.deadLetterResolution.count()).toBe(3);
  });

  it("refuses a discard with no filter, naming the field, and one without a reason", async () => {
    await expect(discardDeadLetters(db, who, { pipeline: "dl", reason: "everything" })).rejects.toThrow(
      /choose which rows: an outcome, a reason, a partition/,
    );
    await expect(
      discardDeadLetters(db, who, { pipeline: "dl", outcome: "quarantined", reason: " " }),
    ).rejects.toThrow(/Give a reason: why these rows will never be replayed/);
    expect(await discardDeadLetters(db, who, { pipeline: "nope", outcome: "late", reason: "x" })).toBeNull();
  });
});
