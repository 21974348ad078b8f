// A producer's corrupt values (amount declared decimal, arriving as JSON objects and booleans) are a
// producer fault, not a schema change: against real Postgres, three pipeline versions on one topic
// (two versions of one pipeline, one of another) record the same undeclarable field through the
// workers' path (observeSchemaDrift). The fault is ONE group across them with the types as a set with
// counts, the rows and samples; it is not in the request queue (a declarable new field on the same
// version still is); the evaluator's producer_fault rule pages each owner with the quarantine count
// and a sample; dismissing (rejecting its requests) clears it.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import type { DriftField } from "@sluice/engine";
import { ledgerSpec } from "@sluice/engine/testing";
import { createTestDatabase, type TestDatabase } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAlertEvaluation } from "../alerts/run-alert-evaluation";
import { RULE_KINDS } from "../alerts/rule-kinds";
import { findChangeRequests } from "./change-request-view";
import { rejectChangeRequest } from "./decide-change-request";
import { observeSchemaDrift } from "./observe-schema-drift";
import { findProducerFaults } from "./producer-faults";

let database: TestDatabase;
let db: PrismaClient;
const TOPIC = "payments-faulty";
const versions: Record<string, string> = {};

const corrupt = (now: number): DriftField => ({
  field: "amount",
  outcome: "quarantined",
  declaredType: "decimal",
  inferredType: "json",
  types: { json: 3, boolean: 1 },
  count: 4,
  firstSeenMs: now - 30_000,
  lastSeenMs: now - 10_000,
  samples: [{ event_id: "e-1", amount: { oops: 1 }, _partition: 0, _offset: 7 }],
});

beforeAll(async () => {
  database = await createTestDatabase("producer_faults");
  db = createPrismaClient(database.url);
  const team = await db.team.create({ data: { slug: "payments-data", name: "Payments Data" } });
  for (const [name, n] of [
    ["fault-ledger", 1],
    ["fault-ledger", 2],
    ["fault-settlements", 1],
  ] as const) {
    const spec = JSON.parse(JSON.stringify({ ...ledgerSpec(TOPIC), name }));
    const pipeline = await db.pipeline.upsert({
      where: { name },
      create: { name, ownerTeamId: team.id },
      update: {},
    });
    const v = await db.pipelineVersion.create({
      data: { pipelineId: pipeline.id, version: n, spec, specHash: `${name}-${n}` },
    });
    versions[`${name}@${n}`] = v.id;
  }
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

describe("producer faults", () => {
  it("one fault across pipelines and versions of the topic, out of the queue, paged with samples; dismissing clears it", async () => {
    const now = Date.now();
    for (const pv of Object.values(versions))
      expect(
        await observeSchemaDrift(db, { pipelineVersionId: pv, batchId: 1, drift: [corrupt(now)] }),
      ).toMatchObject({ kind: "raised" });
    // A later batch of the same corrupt values adds to the counts of the types (a set, not a sentence).
    await observeSchemaDrift(db, {
      pipelineVersionId: versions["fault-ledger@2"]!,
      batchId: 2,
      drift: [{ ...corrupt(now), types: { boolean: 2, null: 1 }, inferredType: "json", count: 3 }],
    });
    // A new field that can simply be declared is a change request, on the same version.
    await observeSchemaDrift(db, {
      pipelineVersionId: versions["fault-ledger@2"]!,
      batchId: 3,
      drift: [
        {
          field: "channel",
          outcome: "rescued",
          inferredType: "string",
          types: { string: 5 },
          count: 5,
          firstSeenMs: now,
          lastSeenMs: now,
          samples: [],
        },
      ],
    });

    const faults = await findProducerFaults(db);
    expect(faults).toHaveLength(1);
    expect(faults[0]).toMatchObject({
      topic: TOPIC,
      field: "amount",
      declaredType: "decimal",
      types: { json: 9, boolean: 5, null: 1 },
      rows: 15,
    });
    expect(faults[0]!.seenBy.map((s) => `${s.pipeline} v${s.version}: ${s.rows}`).sort()).toEqual([
      "fault-ledger v1: 4",
      "fault-ledger v2: 7",
      "fault-settlements v1: 4",
    ]);
    expect(faults[0]!.samples[0]).toMatchObject({ amount: { oops: 1 } });

    const queue = await findChangeRequests(db, { withoutProducerFaults: true });
    expect(queue.map((r) => (r.payload as { observed: { field: string }[] }).observed[0]!.field)).toEqual([
      "channel",
    ]);
    expect(await findChangeRequests(db)).toHaveLength(4);

    // The evaluator pages each owner: one producer_fault alert per pipeline, with the count and a sample.
    const tick = () =>
      runAlertEvaluation(db, {
        evaluator: "workers",
        owner: "w1",
        leaseMs: 60_000,
        kinds: RULE_KINDS.filter((k) => k === "producer_fault"),
      });
    await tick();
    const episodes = await db.alertEpisode.findMany({
      where: { resolvedAt: null },
      include: { rule: { include: { pipeline: true } } },
      orderBy: { id: "asc" },
    });
    expect(episodes.map((e) => [e.rule.pipeline?.name, e.rule.kind, e.value])).toEqual([
      ["fault-ledger", "producer_fault", 11],
      ["fault-settlements", "producer_fault", 4],
    ]);
    expect(episodes[0]!.summary).toMatch(
      /^the producer sends values no contract type holds: amount \(declared decimal\) arrives as json × 6, boolean × 4, null × 1 — 11 rows quarantined; sample \{.*"amount":\{"oops":1\}/,
    );

    // Dismissed (its requests rejected with a note): no fault, and the rule's condition clears.
    for (const s of faults[0]!.seenBy)
      await rejectChangeRequest(
        db,
        { actorUserId: "u-op", actor: "op@sluice.local", from: { origin: "web" } },
        { id: BigInt(s.requestId), pipeline: s.pipeline, note: "producer fixed in 4.2" },
      );
    expect(await findProducerFaults(db)).toEqual([]);
    await tick();
    const rule = await db.alertRule.findFirstOrThrow({
      where: { kind: "producer_fault", pipeline: { name: "fault-settlements" } },
    });
    expect(rule.lastValue).toBeNull();
  });
});
