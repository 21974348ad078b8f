// Schema change requests end to end against real Kafka and Postgres: a running ledger whose producer
// starts sending a new field (and a few values of another type) raises ONE system request with
// counts, first/last seen and samples, later batches update it; the pipeline's owner may not approve,
// an operator does; the new version continues from exactly the old checkpoint's offsets, the sink
// table gets the new column, the old version's runner is fenced mid-flight, and the sink holds every
// valid event id exactly once. Also: concurrent approvals apply once, a crash before commit leaves
// nothing applied (and it is retryable), a request made before the new version is stale, and an
// unfixable proposal is recorded as failed with the message.
import { Kafka, logLevel } from "kafkajs";
import pg from "pg";
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import {
  FencedError,
  PipelineRunner,
  registerPipelineVersion,
  SupersededError,
  type BatchResult,
} from "@sluice/engine";
import { ledgerSpec, silentLogger } from "@sluice/engine/testing";
import { createTestDatabase, endPool, testServices, uniqueName, type TestDatabase } from "@sluice/testing";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorizeAction } from "../auth/authorize-action";
import type { TActor } from "../auth/actor";
import { startPipelineRun } from "../runs/run-pipeline-command";
import { approveChangeRequest, rejectChangeRequest } from "./decide-change-request";
import { findFixedQuarantine } from "./find-fixed-quarantine";
import { observeSchemaDrift } from "./observe-schema-drift";
import { requestSchemaChange } from "./request-schema-change";
import type { TAppliedSchemaChange } from "./apply-schema-change";

let database: TestDatabase;
let pool: pg.Pool;
let db: PrismaClient;
let kafka: Kafka;
let topic: string;
let spec: TPipelineSpec;
let v1: string;
const NAME = "drift-ledger";
const TABLE = "drift_ledger";

const operatorA = { actorUserId: "u-op-a", actor: "op-a@sluice.local", from: { origin: "web" as const } };
const operatorB = { actorUserId: "u-op-b", actor: "op-b@sluice.local", from: { origin: "web" as const } };
const ownerWho = { actorUserId: "u-owner", actor: "owner@sluice.local", from: { origin: "web" as const } };

const event = (i: number, over: Record<string, unknown> = {}) => ({
  event_id: `e-${i}`,
  type: "settlement",
  merchant_id: `m${i % 3}`,
  customer_id: `c${i % 4}`,
  payment_id: `p-${i}`,
  seq: i,
  amount: `${10 + i}.25`,
  currency: "EUR",
  card_country: "DE",
  event_time: new Date(Date.UTC(2026, 10, 30, 12) + i * 1000).toISOString(),
  ...over,
});

async function produce(events: Record<string, unknown>[]): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic,
    messages: events.map((e, i) => ({ partition: i % 2, value: JSON.stringify(e) })),
    acks: -1,
  });
  await producer.disconnect();
}

async function oneBatch(
  pipelineVersionId: string,
  s: TPipelineSpec,
): Promise<Extract<BatchResult, { kind: "committed" }>> {
  const runner = await PipelineRunner.open(
    { pool, kafka, logger: silentLogger },
    { pipelineVersionId, spec: s, owner: "test", readAhead: false },
  );
  try {
    const r = await runner.runBatch();
    if (r.kind !== "committed") throw new Error("the batch read nothing");
    return r;
  } finally {
    await runner.close();
  }
}

/** What the worker does after a commit (workers/src/batches/batch-run-job.ts observeDrift). */
async function batchAndObserve(pipelineVersionId: string, s: TPipelineSpec) {
  const r = await oneBatch(pipelineVersionId, s);
  return {
    result: r,
    observed: r.drift
      ? await observeSchemaDrift(db, { pipelineVersionId, batchId: r.progress.batchId, drift: r.drift })
      : null,
  };
}

const sinkIds = async () =>
  (await pool.query<{ event_id: string }>(`SELECT event_id FROM ${TABLE} ORDER BY event_id`)).rows.map(
    (r) => r.event_id,
  );
const systemRequests = () =>
  db.changeRequest.findMany({
    where: { kind: "schema_change", requestedById: null },
    orderBy: { id: "asc" },
  });

beforeAll(async () => {
  database = await createTestDatabase("schema_change_apply");
  pool = new pg.Pool({ connectionString: database.url, max: 6 });
  db = createPrismaClient(database.url);
  kafka = new Kafka({
    brokers: testServices.kafkaBrokers,
    clientId: "it-schema-change",
    logLevel: logLevel.NOTHING,
  });
  topic = uniqueName("schema_change");
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
  await admin.disconnect();
  spec = ledgerSpec(topic, { name: NAME, owner: "payments-data", sink: { postgres: { table: TABLE } } });
  v1 = (await registerPipelineVersion(pool, spec)).pipelineVersionId;
  await startPipelineRun(db, { pipelineVersionId: v1, actor: "user:op", reason: "test" });
});
afterAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
  await db?.$disconnect();
  await endPool(pool);
  await database?.drop();
});

describe("schema drift raises a request", () => {
  it("a batch without drift carries none and raises nothing", async () => {
    await produce(Array.from({ length: 20 }, (_, i) => event(i)));
    const { result, observed } = await batchAndObserve(v1, spec);
    expect(result.progress.inputRows).toBe(20);
    expect(result.drift).toBeUndefined();
    expect(observed).toBeNull();
    expect(await systemRequests()).toHaveLength(0);
  });

  it("a new field and type mismatches raise ONE system request with inferred types, counts, first/last seen and samples", async () => {
    await produce([
      ...Array.from({ length: 10 }, (_, i) => event(100 + i, { channel: "web" })),
      ...Array.from({ length: 3 }, (_, i) => event(200 + i, { seq: 2.5 + i })),
    ]);
    const { observed } = await batchAndObserve(v1, spec);
    expect(observed).toMatchObject({ kind: "raised" });
    const [cr, ...more] = await systemRequests();
    expect(more).toHaveLength(0);
    expect(cr).toMatchObject({
      status: "pending",
      requestedBy: "system",
      requestedById: null,
      pipelineVersionId: v1,
    });
    const payload = cr!.payload as {
      observed: {
        field: string;
        outcome: string;
        inferredType: string;
        count: number;
        firstSeen: string;
        lastSeen: string;
        samples: { event_id: string; _offset: number }[];
      }[];
      proposed: TPipelineSpec;
      needsEdit: string | null;
    };
    const byField = Object.fromEntries(payload.observed.map((o) => [o.field, o]));
    expect(byField.channel).toMatchObject({ outcome: "rescued", inferredType: "string", count: 10 });
    expect(byField.channel!.samples).toHaveLength(5);
    for (const s of byField.channel!.samples) expect(s.event_id).toMatch(/^e-10\d$/);
    expect(Date.parse(byField.channel!.firstSeen)).toBeLessThanOrEqual(Date.parse(byField.channel!.lastSeen));
    expect(byField.seq).toMatchObject({ outcome: "quarantined", inferredType: "double", count: 3 });
    expect(byField.seq!.samples.map((s) => s.event_id).sort()).toEqual(["e-200", "e-201", "e-202"]);
    // The proposal: the new field as optional with its type; the int widened to decimal (exact).
    expect(payload.proposed.contract.fields.channel).toEqual({ type: "string", optional: true });
    expect(payload.proposed.contract.fields.seq).toMatchObject({ type: "decimal" });
    expect(payload.needsEdit).toBeNull();
    expect(
      await db.auditEvent.count({ where: { action: "change.request", actor: "system", origin: "system" } }),
    ).toBe(1);
  });

  it("later batches with the same drift update the pending request's counts and last seen, and raise no second one", async () => {
    const [before] = await systemRequests();
    await produce(Array.from({ length: 4 }, (_, i) => event(300 + i, { channel: "app" })));
    const { observed } = await batchAndObserve(v1, spec);
    expect(observed).toMatchObject({ kind: "updated", ids: [String(before!.id)] });
    const all = await systemRequests();
    expect(all).toHaveLength(1);
    const channel = (
      all[0]!.payload as {
        observed: { field: string; count: number; lastSeen: string; samples: unknown[] }[];
      }
    ).observed.find((o) => o.field === "channel")!;
    expect(channel.count).toBe(14);
    expect(channel.samples).toHaveLength(5);
    const old = (before!.payload as { observed: { field: string; lastSeen: string }[] }).observed.find(
      (o) => o.field === "channel",
    )!;
    expect(Date.parse(channel.lastSeen)).toBeGreaterThanOrEqual(Date.parse(old.lastSeen));
  });
});

describe("approving a schema change applies it at a batch boundary", () => {
  let staleId: bigint;

  it("the pipeline's owner may not approve (change.approve is the operators'), nor anyone their own request", async () => {
    const team = await db.team.findUniqueOrThrow({ where: { slug: "payments-data" } });
    const owner: TActor = {
      id: "u-owner",
      email: "owner@sluice.local",
      name: "Owner",
      role: "owner",
      teams: [{ id: team.id, slug: team.slug, name: team.name }],
    };
    const decision = await authorizeAction(db, owner, "change.approve", { pipeline: NAME });
    expect(decision.ok).toBe(false);
    // A person's request made now, against v1: it becomes stale once the system request is applied.
    const proposed = JSON.parse(JSON.stringify(spec));
    proposed.contract.fields.note = "string?";
    const human = await requestSchemaChange(db, operatorA, { pipeline: NAME, proposed, reason: "add note" });
    staleId = BigInt(human.id);
    await expect(approveChangeRequest(db, operatorA, { id: staleId, pipeline: NAME })).rejects.toThrow(
      /someone else must approve it \(four-eyes rule/,
    );
  });

  it("a crash before commit leaves nothing applied, and the approval can be retried", async () => {
    const [cr] = await systemRequests();
    await expect(
      approveChangeRequest(
        db,
        operatorA,
        { id: cr!.id, pipeline: NAME },
        { beforeCommit: async () => Promise.reject(new Error("killed mid-apply")) },
      ),
    ).rejects.toThrow("killed mid-apply");
    expect((await db.changeRequest.findUniqueOrThrow({ where: { id: cr!.id } })).status).toBe("pending");
    expect(await db.pipelineVersion.count({ where: { pipeline: { name: NAME } } })).toBe(1);
    expect((await db.pipelineRun.findUniqueOrThrow({ where: { pipelineVersionId: v1 } })).status).toBe(
      "running",
    );
    const cols = await pool.query(
      `SELECT 1 FROM information_schema.columns WHERE table_name = $1 AND column_name = 'channel'`,
      [TABLE],
    );
    expect(cols.rowCount).toBe(0);
  });

  it("two operators approving at once apply it once; the in-flight old runner is fenced; the new version continues from the same offsets", async () => {
    const [cr] = await systemRequests();
    // A runner of v1 holding the lease, as a worker mid-batch would: new events are waiting.
    await produce(Array.from({ length: 6 }, (_, i) => event(400 + i, { channel: "pos" })));
    const inFlight = await PipelineRunner.open(
      { pool, kafka, logger: silentLogger },
      { pipelineVersionId: v1, spec, owner: "in-flight", readAhead: false },
    );
    const before = await pool.query<{ end_offsets: Record<string, number>; last_batch_id: string }>(
      `SELECT end_offsets, last_batch_id FROM checkpoints WHERE pipeline_version_id = $1`,
      [v1],
    );
    const results = await Promise.allSettled([
      approveChangeRequest(db, operatorA, { id: cr!.id, pipeline: NAME }),
      approveChangeRequest(db, operatorB, { id: cr!.id, pipeline: NAME }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(String((results.find((r) => r.status === "rejected") as PromiseRejectedResult).reason)).toMatch(
      /already applied \(by op-[ab]@sluice\.local\)|decided by someone else/,
    );
    const applied = await db.changeRequest.findUniqueOrThrow({ where: { id: cr!.id } });
    expect(applied.status).toBe("applied");
    const result = applied.result as unknown as TAppliedSchemaChange;
    expect(result).toMatchObject({
      version: 2,
      previousVersion: 1,
      run: "running",
      offsets: before.rows[0]!.end_offsets,
      afterBatchId: Number(before.rows[0]!.last_batch_id),
    });
    expect(result.sinkChanges).toEqual(
      expect.arrayContaining([
        "column channel (text) added, empty in the rows already there",
        "column seq widened from bigint to numeric",
      ]),
    );
    expect(await db.pipelineVersion.count({ where: { pipeline: { name: NAME } } })).toBe(2);
    const v2 = result.pipelineVersionId;
    const cps = await pool.query<{ pipeline_version_id: string; end_offsets: Record<string, number> }>(
      `SELECT pipeline_version_id, end_offsets FROM checkpoints WHERE pipeline_version_id = ANY($1)`,
      [[v1, v2]],
    );
    expect(cps.rows.find((r) => r.pipeline_version_id === v2)!.end_offsets).toEqual(
      before.rows[0]!.end_offsets,
    );
    expect((await db.pipelineRun.findUniqueOrThrow({ where: { pipelineVersionId: v1 } })).status).toBe(
      "stopped",
    );
    expect(await db.pipelineRun.findUniqueOrThrow({ where: { pipelineVersionId: v2 } })).toMatchObject({
      status: "running",
      desiredState: "running",
    });
    expect(await db.auditEvent.count({ where: { action: "change.apply", outcome: "succeeded" } })).toBe(1);

    // The old runner's batch cannot commit any more.
    await expect(inFlight.runBatch()).rejects.toSatisfy(
      (e) => e instanceof FencedError || e instanceof SupersededError,
    );
    await inFlight.close();

    // The new version reads on from the same offsets: the waiting events, with their new column.
    const v2spec = (await db.pipelineVersion.findUniqueOrThrow({ where: { id: v2 } }))
      .spec as unknown as TPipelineSpec;
    const r = await oneBatch(v2, v2spec);
    expect(r.progress.inputRows).toBe(6);
    expect(r.drift).toBeUndefined();
    const expected = [
      ...Array.from({ length: 20 }, (_, i) => `e-${i}`),
      ...Array.from({ length: 10 }, (_, i) => `e-${100 + i}`),
      ...Array.from({ length: 4 }, (_, i) => `e-${300 + i}`),
      ...Array.from({ length: 6 }, (_, i) => `e-${400 + i}`),
    ].sort();
    expect(await sinkIds()).toEqual(expected);
    const channels = await pool.query<{ event_id: string; channel: string | null }>(
      `SELECT event_id, channel FROM ${TABLE} WHERE channel IS NOT NULL ORDER BY event_id`,
    );
    expect(channels.rows.map((x) => x.event_id)).toEqual(Array.from({ length: 6 }, (_, i) => `e-${400 + i}`));

    // The 3 rows quarantined for seq's type are the ones this change fixes.
    const fixed = await findFixedQuarantine(db, cr!.id);
    expect(fixed).toMatchObject({
      version: 1,
      count: 3,
      reasons: [{ reason: 'field "seq" should be int', count: 3 }],
      capped: false,
    });
    const ids = await db.deadLetter.findMany({
      where: { pipelineVersionId: v1, outcome: "quarantined" },
      select: { id: true },
    });
    expect([...fixed!.ids].sort()).toEqual(ids.map((d) => String(d.id)).sort());

    // Approving again by the same operator is idempotent.
    const winner = results.findIndex((x) => x.status === "fulfilled") === 0 ? operatorA : operatorB;
    expect(await approveChangeRequest(db, winner, { id: cr!.id, pipeline: NAME })).toMatchObject({
      status: "applied",
    });
    expect(await db.pipelineVersion.count({ where: { pipeline: { name: NAME } } })).toBe(2);
  });

  it("a request made before the new version is stale, and applies nothing", async () => {
    await expect(approveChangeRequest(db, operatorB, { id: staleId, pipeline: NAME })).rejects.toThrow(
      /is stale: pipeline "drift-ledger" got a new version \(v2\)/,
    );
    expect((await db.changeRequest.findUniqueOrThrow({ where: { id: staleId } })).status).toBe("stale");
    expect(await db.pipelineVersion.count({ where: { pipeline: { name: NAME } } })).toBe(2);
  });

  it("a proposal that cannot continue the state is recorded as failed with the reason, nothing registered", async () => {
    const current = (
      await db.pipelineVersion.findFirstOrThrow({
        where: { pipeline: { name: NAME } },
        orderBy: { version: "desc" },
      })
    ).spec as unknown as TPipelineSpec;
    const proposed = JSON.parse(JSON.stringify(current));
    proposed.dedupe = { ...proposed.dedupe, key: ["payment_id"] };
    proposed.contract.fields.extra = "string?";
    const cr = await requestSchemaChange(db, ownerWho, { pipeline: NAME, proposed, reason: "re-key" });
    await expect(approveChangeRequest(db, operatorA, { id: BigInt(cr.id), pipeline: NAME })).rejects.toThrow(
      /failed and is recorded as failed: .*dedup/s,
    );
    const row = await db.changeRequest.findUniqueOrThrow({ where: { id: BigInt(cr.id) } });
    expect(row.status).toBe("failed");
    expect((row.result as { error: string }).error).toMatch(/dedup/);
    expect(await db.pipelineVersion.count({ where: { pipeline: { name: NAME } } })).toBe(2);
    expect(await db.auditEvent.count({ where: { action: "change.apply", outcome: "refused" } })).toBe(1);
  });

  it("a drift without a safe type raises a request for a person to edit: approving it is refused and it stays pending", async () => {
    const latest = await db.pipelineVersion.findFirstOrThrow({
      where: { pipeline: { name: NAME } },
      orderBy: { version: "desc" },
    });
    const drift = [
      {
        field: "amount",
        outcome: "quarantined" as const,
        declaredType: "decimal" as const,
        inferredType: "string" as const,
        types: { string: 2 },
        count: 2,
        firstSeenMs: 1,
        lastSeenMs: 2,
        samples: [{ event_id: "x-1" }],
      },
    ];
    const raised = await observeSchemaDrift(db, { pipelineVersionId: latest.id, batchId: 99, drift });
    expect(raised).toMatchObject({ kind: "raised" });
    const id = BigInt((raised as { id: string }).id);
    expect(
      ((await db.changeRequest.findUniqueOrThrow({ where: { id } })).payload as { needsEdit: string })
        .needsEdit,
    ).toMatch(/amount is declared decimal but arrives as string/);
    await expect(approveChangeRequest(db, operatorA, { id, pipeline: NAME })).rejects.toThrow(
      /has no safe proposal to apply/,
    );
    expect((await db.changeRequest.findUniqueOrThrow({ where: { id } })).status).toBe("pending");
    expect(await db.pipelineVersion.count({ where: { pipeline: { name: NAME } } })).toBe(2);

    // A later batch: another field without a safe type joins that request (one decision: fix the
    // producer, or reject); a new field that can be declared gets a request of its own, never blocked.
    const later = [
      {
        field: "currency",
        outcome: "quarantined" as const,
        declaredType: "string" as const,
        inferredType: "boolean" as const,
        types: { boolean: 1 },
        count: 1,
        firstSeenMs: 5,
        lastSeenMs: 5,
        samples: [{ event_id: "x-2" }],
      },
      {
        field: "loyalty_tier",
        outcome: "rescued" as const,
        inferredType: "string" as const,
        types: { string: 3 },
        count: 3,
        firstSeenMs: 5,
        lastSeenMs: 6,
        samples: [{ event_id: "x-3" }],
      },
    ];
    const next = await observeSchemaDrift(db, { pipelineVersionId: latest.id, batchId: 100, drift: later });
    expect(next).toMatchObject({ kind: "raised+updated", ids: [String(id)], raised: [expect.any(String)] });
    const joined = (await db.changeRequest.findUniqueOrThrow({ where: { id } })).payload as {
      needsEdit: string;
      observed: { field: string }[];
    };
    expect(joined.observed.map((o) => o.field)).toEqual(["amount", "currency"]);
    expect(joined.needsEdit).toMatch(
      /amount is declared decimal but arrives as string.*currency is declared string but arrives as boolean/,
    );
    const channel = await db.changeRequest.findUniqueOrThrow({
      where: { id: BigInt((next as { raised: string[] }).raised[0]!) },
    });
    expect(channel.payload).toMatchObject({
      needsEdit: null,
      observed: [{ field: "loyalty_tier", outcome: "rescued" }],
    });
    await approveChangeRequest(db, operatorA, { id: channel.id, pipeline: NAME });
    expect((await db.changeRequest.findUniqueOrThrow({ where: { id: channel.id } })).status).toBe("applied");
    expect(await db.pipelineVersion.count({ where: { pipeline: { name: NAME } } })).toBe(3);
  });

  it("once rejected, the same drift raises nothing again", async () => {
    const latest = await db.pipelineVersion.findFirstOrThrow({
      where: { pipeline: { name: NAME } },
      orderBy: { version: "desc" },
    });
    // The undeclarable request (made against the version before loyalty_tier was declared) is rejected.
    const open = (
      await db.changeRequest.findMany({ where: { requestedById: null, status: "pending" } })
    ).filter((r) => (r.payload as { needsEdit?: string | null }).needsEdit);
    expect(open).toHaveLength(1);
    await rejectChangeRequest(db, operatorB, {
      id: open[0]!.id,
      pipeline: NAME,
      note: "corrupt values from a producer bug, not a schema change",
    });
    const before = await db.changeRequest.count();
    const drift = [
      {
        field: "amount",
        outcome: "quarantined" as const,
        declaredType: "decimal" as const,
        inferredType: "string" as const,
        types: { string: 1 },
        count: 1,
        firstSeenMs: 3,
        lastSeenMs: 3,
        samples: [],
      },
    ];
    expect(await observeSchemaDrift(db, { pipelineVersionId: latest.id, batchId: 100, drift })).toEqual({
      kind: "none",
    });
    expect(await db.changeRequest.count()).toBe(before);
  });
});
