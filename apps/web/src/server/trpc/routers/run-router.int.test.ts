// Lifecycle commands from the console: a reason is required, each command is in the run history and
// the audit log with the signed-in user, a refused command is audited as refused and changes nothing,
// and a start queues the version's first batch job in BullMQ at once (real Redis, own queue).
import { BatchQueue } from "@sluice/queue";
import { batchRunJobId } from "@sluice/queue";
import { testServices, uniqueName, serveNewestVersion } from "@sluice/testing";
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
  await serveNewestVersion(
    c.db,
    (
      await c.db.pipeline.create({
        data: {
          name: "lifecycle-p",
          ownerTeamId: team.id,
          versions: { create: { version: 1, spec: { name: "lifecycle-p" }, specHash: "h" } },
        },
      })
    ).id,
  );
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
        { version: 1, phase: "stopped" },
        { version: 1, phase: "running" },
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
      ["pipeline.pause", "upstream maintenance", { version: 1, phase: "paused" }],
      ["pipeline.resume", "maintenance over", { version: 1, phase: "running" }],
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
    expect(refused).toMatchObject({ reason: "just because", after: { version: 1, refused: res.message } });
    expect(await c.db.pipelineRun.findFirstOrThrow()).toMatchObject({ status: "paused" });
  });
});

describe("run.command on a named version", () => {
  // Two versions side by side: v1 running beside v2 (as a version with fresh state in its own table
  // runs), and v3 that continued v2's state — so v2 is superseded.
  const phases = async () =>
    Object.fromEntries(
      (
        await c.db.pipelineVersion.findMany({
          where: { pipeline: { name: "two-versions" } },
          include: { run: true },
        })
      ).map((v) => [v.version, v.run ? `${v.run.status}/${v.run.desiredState}` : "none"]),
    );
  const on = (cmd: string, version: number | undefined, reason = `e2e ${cmd}`) =>
    c.trpc(
      "mutation",
      "run.command",
      { pipeline: "two-versions", command: cmd, reason, ...(version === undefined ? {} : { version }) },
      operator,
    );

  beforeAll(async () => {
    const team = await c.db.team.findUniqueOrThrow({ where: { slug: "payments-data" } });
    await serveNewestVersion(
      c.db,
      (
        await c.db.pipeline.create({
          data: {
            name: "two-versions",
            ownerTeamId: team.id,
            versions: {
              create: [
                { version: 1, spec: { name: "two-versions" }, specHash: "a" },
                { version: 2, spec: { name: "two-versions" }, specHash: "b" },
              ],
            },
          },
        })
      ).id,
    );
  });

  it("each command acts on the version named and no other; the audit row names it", async () => {
    expect((await on("start", 1)).status).toBe(200);
    expect(await phases()).toEqual({ 1: "running/running", 2: "none" });
    expect((await on("start", 2)).status).toBe(200);
    expect((await on("pause", 1)).status).toBe(200);
    expect(await phases()).toEqual({ 1: "paused/paused", 2: "running/running" });
    expect((await on("stop", 1)).status).toBe(200);
    expect(await phases()).toEqual({ 1: "stopped/stopped", 2: "running/running" });
    expect((await on("start", 1)).status).toBe(200);
    expect(await phases()).toEqual({ 1: "running/running", 2: "running/running" });
    // Without a version: the serving (newest) one.
    expect((await on("pause", undefined)).status).toBe(200);
    expect(await phases()).toEqual({ 1: "running/running", 2: "paused/paused" });
    const events = await c.db.auditEvent.findMany({
      where: { targetLabel: "two-versions", action: { startsWith: "pipeline." } },
      orderBy: { id: "asc" },
    });
    expect(events.map((e) => [e.action, (e.after as { version: number }).version])).toEqual([
      ["pipeline.start", 1],
      ["pipeline.start", 2],
      ["pipeline.pause", 1],
      ["pipeline.stop", 1],
      ["pipeline.start", 1],
      ["pipeline.pause", 2],
    ]);
  });

  it("a version that does not exist is 404 naming it, and nothing changes", async () => {
    const before = await phases();
    expect(await on("stop", 7)).toMatchObject({
      status: 404,
      message: 'Pipeline "two-versions" has no version 7.',
    });
    expect(await phases()).toEqual(before);
  });

  it("a superseded version can be stopped but never started again, with the version to act on", async () => {
    const [v1, v2] = await c.db.pipelineVersion.findMany({
      where: { pipeline: { name: "two-versions" } },
      orderBy: { version: "asc" },
    });
    await c.db.pipelineVersion.update({ where: { id: v1!.id }, data: { supersededById: v2!.id } });
    expect((await on("stop", 1)).status).toBe(200);
    const res = await on("start", 1);
    expect(res).toMatchObject({
      status: 409,
      message:
        "cannot start version 1: version 2 took its place (it continued or rebuilt this version's state), so version 1 can never run again — act on version 2",
    });
    expect(await phases()).toEqual({ 1: "stopped/stopped", 2: "paused/paused" });
  });
});
