// Change requests over the real handler, against a real Kafka topic: bad reset input refused with a
// message naming the fix (past the log end, an unknown target, no reason) and audited; a
// windowed aggregate rewound with its state kept is refused with the reason; an approval by a second
// approver after the first is refused (it was applied once); a request for a pipeline that got a new
// version since is stale; a rejection needs a note; every step is in the audit log.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { testServices, uniqueName, serveNewestVersion } from "@sluice/testing";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEMO_PASSWORD,
  startConsoleUnderTest,
  type TConsoleUnderTest,
} from "../../testing/console-under-test";

let c: TConsoleUnderTest;
let kafka: Kafka;
let topic: string;
const cookie: Record<string, string> = {};
let teamId: string;

const call = (who: string, path: string, input: unknown) => c.trpc("mutation", path, input, cookie[who]!);
const idOf = (res: { json: unknown }) =>
  (res.json as { result: { data: { json: { id: string } } } }).result.data.json.id;

async function pipeline(name: string, spec: Record<string, unknown> = {}) {
  await serveNewestVersion(
    c.db,
    (
      await c.db.pipeline.create({
        data: {
          name,
          ownerTeamId: teamId,
          versions: {
            create: { version: 1, spec: { name, source: { kafka: { topic } }, ...spec }, specHash: name },
          },
        },
      })
    ).id,
  );
  const v = await c.db.pipelineVersion.findFirstOrThrow({ where: { pipeline: { name } } });
  // As if 40 events of each partition were read.
  await c.db.checkpoint.create({
    data: { pipelineVersionId: v.id, lastBatchId: 3, endOffsets: { "0": 40, "1": 40 } },
  });
}

beforeAll(async () => {
  c = await startConsoleUnderTest("change_router");
  teamId = (await c.db.team.findUniqueOrThrow({ where: { slug: "payments-data" } })).id;
  for (const email of [
    "operator@sluice.local",
    "oncall@sluice.local",
    "owner@sluice.local",
    "admin@sluice.local",
  ]) {
    cookie[email] = (
      await c.signIn(email, DEMO_PASSWORD, { ip: `10.5.0.${Object.keys(cookie).length + 1}` })
    ).cookie!;
  }
  topic = uniqueName("change_router");
  kafka = new Kafka({
    clientId: "change-router-test",
    brokers: testServices.kafkaBrokers,
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  for (const partition of [0, 1])
    await producer.send({
      topic,
      messages: Array.from({ length: 50 }, (_, i) => ({ partition, value: `{"n":${i}}` })),
    });
  await producer.disconnect();
  await pipeline("cr-ledger");
  await pipeline("cr-windows", { aggregate: { window: { tumbling: "1m" } } });
});
afterAll(async () => {
  const admin = kafka?.admin();
  await admin?.connect();
  await admin?.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin?.disconnect();
  await c?.close();
});

describe("change.requestReset", () => {
  it("refuses offsets past the log end naming the partition and the fix, an unknown target kind and a missing reason; audited as refused, nothing asked", async () => {
    const past = await call("owner@sluice.local", "change.requestReset", {
      pipeline: "cr-ledger",
      to: { kind: "offsets", offsets: { "0": 51 } },
      reason: "x",
    });
    expect(past).toMatchObject({
      status: 400,
      message:
        'checkpoint reset refused: partition 0: offset 51 is past the log end 50; choose at most 50 (or "latest")',
    });
    const noTarget = await call("owner@sluice.local", "change.requestReset", {
      pipeline: "cr-ledger",
      to: { kind: "yesterday" },
      reason: "x",
    });
    expect(noTarget.status).toBe(400);
    expect(noTarget.message).toMatch(/^to\.kind: /);
    const noReason = await call("owner@sluice.local", "change.requestReset", {
      pipeline: "cr-ledger",
      to: { kind: "latest" },
      reason: " ",
    });
    expect(noReason).toMatchObject({ status: 400, message: "reason: Give a reason: the approver reads it" });
    expect(await c.db.changeRequest.count()).toBe(0);
    expect(
      await c.db.auditEvent.count({
        where: { action: "change.request", outcome: "refused", actor: "owner@sluice.local" },
      }),
    ).toBe(1);
  });

  it("refuses rewinding a windowed aggregate while keeping its state: it would double count", async () => {
    const res = await call("owner@sluice.local", "change.requestReset", {
      pipeline: "cr-windows",
      to: { kind: "earliest" },
      state: "keep",
      reason: "recount",
    });
    expect(res.status).toBe(400);
    expect(res.message).toContain(
      "rewinding a windowed aggregate while keeping its window state double counts: the 80 re-read event(s) are already in their windows",
    );
  });
});

describe("deciding", () => {
  it("applies once: a second approver finds it applied by the first; the checkpoint moved to the targets", async () => {
    const asked = await call("operator@sluice.local", "change.requestReset", {
      pipeline: "cr-ledger",
      to: { kind: "offsets", offsets: { "0": 10 } },
      reason: "re-read 30",
    });
    expect(asked.status).toBe(200);
    const id = idOf(asked);
    const [a, b] = await Promise.all([
      call("oncall@sluice.local", "change.approve", { id, pipeline: "cr-ledger", note: "ok" }),
      call("admin@sluice.local", "change.approve", { id, pipeline: "cr-ledger", note: "ok too" }),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 409]);
    expect([a, b].find((r) => r.status === 409)!.message).toMatch(
      new RegExp(
        `^change request #${id} is already applied \\(by (oncall|admin)@sluice.local\\): nothing to approve$`,
      ),
    );
    const cp = await c.db.checkpoint.findFirstOrThrow({
      where: { pipelineVersion: { pipeline: { name: "cr-ledger" } } },
    });
    expect(cp.endOffsets).toEqual({ "0": 10, "1": 40 });
    expect(await c.db.checkpointReset.count()).toBe(1);
  });

  it("a request for a pipeline that got a new version since is stale: refused, and it says to ask again", async () => {
    const asked = await call("operator@sluice.local", "change.requestReset", {
      pipeline: "cr-ledger",
      to: { kind: "latest" },
      reason: "skip",
    });
    const id = idOf(asked);
    const p = await c.db.pipeline.findUniqueOrThrow({ where: { name: "cr-ledger" } });
    await c.db.pipelineVersion.create({
      data: {
        pipelineId: p.id,
        version: 2,
        spec: { name: "cr-ledger", source: { kafka: { topic } } },
        specHash: "v2",
      },
    });
    // Registered as the serving version, as a registration does: the request's v1 is no longer current.
    await serveNewestVersion(c.db, p.id);
    const res = await call("oncall@sluice.local", "change.approve", { id, pipeline: "cr-ledger" });
    expect(res).toMatchObject({
      status: 409,
      message: `change request #${id} is stale: pipeline "cr-ledger" got a new version (v2) after it was made, so its impact no longer holds. Request it again against the current version.`,
    });
    expect((await c.db.changeRequest.findUniqueOrThrow({ where: { id: BigInt(id) } })).status).toBe("stale");
    const replay = await call("oncall@sluice.local", "change.approve", { id, pipeline: "cr-ledger" });
    expect(replay).toMatchObject({
      status: 409,
      message: `change request #${id} is already stale: nothing to approve`,
    });
  });

  it("a rejection needs a note; the requester may cancel, nobody else but an admin", async () => {
    const asked = await call("operator@sluice.local", "change.requestReset", {
      pipeline: "cr-windows",
      to: { kind: "latest" },
      reason: "skip ahead",
    });
    const id = idOf(asked);
    expect(await call("oncall@sluice.local", "change.reject", { id, pipeline: "cr-windows" })).toMatchObject({
      status: 400,
      message: "note: say why it is rejected: the requester reads it",
    });
    expect(await call("oncall@sluice.local", "change.cancel", { id, pipeline: "cr-windows" })).toMatchObject({
      status: 403,
      message: `only operator@sluice.local, who asked for change request #${id}, (or an admin) may cancel it`,
    });
    expect(
      (await call("operator@sluice.local", "change.cancel", { id, pipeline: "cr-windows" })).status,
    ).toBe(200);
    expect((await c.db.changeRequest.findUniqueOrThrow({ where: { id: BigInt(id) } })).status).toBe(
      "cancelled",
    );
  });

  it("every step is in the audit log with who did it", async () => {
    const events = await c.db.auditEvent.findMany({
      where: { action: { startsWith: "change." } },
      orderBy: { id: "asc" },
    });
    const seen = new Set(events.map((e) => `${e.action}:${e.outcome}`));
    for (const step of [
      "change.request:succeeded",
      "change.request:refused",
      "change.approve:succeeded",
      "change.apply:succeeded",
      "change.approve:refused",
      "change.stale:succeeded",
      "change.reject:refused",
      "change.cancel:refused",
      "change.cancel:succeeded",
    ]) {
      expect(seen, step).toContain(step);
    }
  });
});

describe("change.requestSchemaChange", () => {
  const demo = readFileSync(
    path.resolve(
      path.dirname(fileURLToPath(import.meta.url)),
      "../../../../../../demo/pipelines/payments-ledger.yaml",
    ),
    "utf8",
  );
  const yaml = demo
    .replace(/^name: payments-ledger$/m, "name: cr-schema")
    .replace("table: payments_ledger", "table: cr_schema");

  it("raises a request from a draft's text for the register panel, refuses an invalid one naming the line, and an operator's approval registers it", async () => {
    await c.db.pipeline.create({ data: { name: "cr-schema", ownerTeamId: teamId } });
    const { parseSpecOrThrow } = await import("@sluice/pipeline-spec");
    const registered = parseSpecOrThrow(yaml);
    await c.db.pipelineVersion.create({
      data: {
        pipeline: { connect: { name: "cr-schema" } },
        version: 1,
        spec: JSON.parse(JSON.stringify(registered)),
        specHash: "cr-schema-1",
      },
    });
    await serveNewestVersion(
      c.db,
      (await c.db.pipeline.findUniqueOrThrow({ where: { name: "cr-schema" } })).id,
    );

    const bad = await call("owner@sluice.local", "change.requestSchemaChange", {
      pipeline: "cr-schema",
      specText: yaml.replace("seq: int", "seq: integer"),
      reason: "typo",
    });
    expect(bad.status).toBe(400);
    expect(bad.message).toMatch(
      /^the proposed spec is invalid: line \d+: contract\.fields\.seq: "integer" is not a field type/,
    );
    expect(
      await c.db.auditEvent.count({
        where: { action: "change.request", outcome: "refused", targetLabel: "cr-schema" },
      }),
    ).toBe(1);

    // A breaking change (seq retyped to string), as the register panel's "Request approval" sends it.
    const asked = await call("owner@sluice.local", "change.requestSchemaChange", {
      pipeline: "cr-schema",
      specText: yaml.replace("seq: int", "seq: string"),
      reason: "seq becomes an opaque id upstream",
    });
    expect(asked.status).toBe(200);
    const id = idOf(asked);
    const cr = await c.db.changeRequest.findUniqueOrThrow({ where: { id: BigInt(id) } });
    expect(cr).toMatchObject({ kind: "schema_change", status: "pending", requestedBy: "owner@sluice.local" });
    expect((cr.impact as { contract: { compatibility: string } }).contract.compatibility).toBe("breaking");

    expect((await call("owner@sluice.local", "change.approve", { id, pipeline: "cr-schema" })).status).toBe(
      403,
    );
    const approved = await call("oncall@sluice.local", "change.approve", {
      id,
      pipeline: "cr-schema",
      note: "checked downstream",
    });
    expect(approved.status, approved.message).toBe(200);
    expect((await c.db.changeRequest.findUniqueOrThrow({ where: { id: BigInt(id) } })).status).toBe(
      "applied",
    );
    expect(await c.db.pipelineVersion.count({ where: { pipeline: { name: "cr-schema" } } })).toBe(2);
    const fixed = await c.trpc("query", "change.fixedQuarantine", { id }, cookie["owner@sluice.local"]!);
    expect(fixed.status).toBe(200);
    expect((fixed.json as { result: { data: { json: { count: number } } } }).result.data.json.count).toBe(0);
  });
});
