// Lifecycle commands from the console: a reason is required, each command is in the run history and
// the audit log with the signed-in user, a refused command is audited as refused and changes nothing,
// and a start queues the version's first batch job in BullMQ at once (real Redis, own queue).
import { BatchQueue } from "@sluice/queue";
import { batchRunJobId } from "@sluice/queue";
import { testServices, uniqueName } from "@sluice/testing";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEMO_PASSWORD,
  startConsoleUnderTest,
  type TConsoleUnderTest,
} from "../../testing/console-under-test";

let c: TConsoleUnderTest;
let operator: string;
let redis: Redis;
let queue: BatchQueue;

beforeAll(async () => {
  redis = new Redis(testServices.redisUrl, { maxRetriesPerRequest: null });
  queue = new BatchQueue(uniqueName("run_router_q"), redis);
  c = await startConsoleUnderTest("run_router", { scheduler: queue });
  operator = (await c.signIn("operator@sluice.local", DEMO_PASSWORD, { ip: "10.7.0.1" })).cookie!;
  const team = await c.db.team.findUniqueOrThrow({ where: { slug: "payments-data" } });
  await c.db.pipeline.create({
    data: {
      name: "lifecycle-p",
      ownerTeamId: team.id,
      versions: { create: { version: 1, spec: { name: "lifecycle-p" }, specHash: "h" } },
    },
  });
});
afterAll(async () => {
  await queue?.queue.obliterate({ force: true }).catch(() => undefined);
  await queue?.close();
  redis?.disconnect();
  await c?.close();
});

const command = (cmd: string, reason: string) =>
  c.trpc("mutation", "run.command", { pipeline: "lifecycle-p", command: cmd, reason }, operator);

describe("run.command", () => {
  it("refuses a command without a reason, naming the field, and changes nothing", async () => {
    const res = await command("start", "   ");
    expect(res).toMatchObject({
      status: 400,
      message: "reason: Give a reason: it is recorded with your name in the run history and the audit log",
    });
    expect(await c.db.pipelineRunTransition.count()).toBe(0);
  });

  it("a start is recorded with who and why in the run history and the audit log, and queues the first batch job", async () => {
    const res = await command("start", "first deploy");
    expect(res.status).toBe(200);
    const version = await c.db.pipelineVersion.findFirstOrThrow({
      where: { pipeline: { name: "lifecycle-p" } },
      include: { run: true },
    });
    expect(version.run).toMatchObject({ status: "running", desiredState: "running" });
    const job = await queue.queue.getJob(batchRunJobId(version.id, version.run!.scheduleSeq));
    expect(job?.data).toMatchObject({ pipelineVersionId: version.id, seq: version.run!.scheduleSeq });
    const events = await c.db.auditEvent.findMany({ where: { action: { startsWith: "pipeline." } } });
    expect(
      events.map((e) => [
        e.action,
        e.outcome,
        e.actor,
        e.targetType,
        e.targetLabel,
        e.reason,
        e.before,
        e.after,
        e.origin,
      ]),
    ).toEqual([
      [
        "pipeline.start",
        "succeeded",
        "operator@sluice.local",
        "pipeline",
        "lifecycle-p",
        "first deploy",
        { phase: "stopped" },
        { phase: "running" },
        "web",
      ],
    ]);
  });

  it("pause then resume: each is audited with its reason, and the phase follows at once", async () => {
    expect((await command("pause", "upstream maintenance")).status).toBe(200);
    expect(await c.db.pipelineRun.findFirstOrThrow()).toMatchObject({ status: "paused" });
    expect((await command("resume", "maintenance over")).status).toBe(200);
    const events = await c.db.auditEvent.findMany({
      where: { action: { in: ["pipeline.pause", "pipeline.resume"] } },
      orderBy: { id: "asc" },
    });
    expect(events.map((e) => [e.action, e.reason, e.after])).toEqual([
      ["pipeline.pause", "upstream maintenance", { phase: "paused" }],
      ["pipeline.resume", "maintenance over", { phase: "running" }],
    ]);
  });
  it("a command that does not apply is refused with what to do instead, audited as refused, and changes nothing", async () => {
    expect((await command("pause", "again")).status).toBe(200);
    const res = await command("start", "just because");
    expect(res).toMatchObject({
      status: 409,
      message:
        "cannot start: the pipeline version is paused; start applies to a stopped pipeline version — use resume",
    });
    const refused = await c.db.auditEvent.findFirstOrThrow({
      where: { action: "pipeline.start", outcome: "refused" },
    });
    expect(refused).toMatchObject({ reason: "just because", after: { refused: res.message } });
    expect(await c.db.pipelineRun.findFirstOrThrow()).toMatchObject({ status: "paused" });
  });
});
