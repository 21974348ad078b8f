// The Audit page's procedures over the real handler: every kind of change and refusal lands in the log
// (a failed sign-in, a refused action, a lifecycle command with its reason), the filters select by
// actor, action area, pipeline, outcome and time, a reversed time range is refused naming the field,
// and the CSV export holds the same rows with user-typed text quoted and formulas neutralised.
import { serveNewestVersion } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEMO_PASSWORD,
  startConsoleUnderTest,
  type TConsoleUnderTest,
} from "../../testing/console-under-test";

let c: TConsoleUnderTest;
let viewer: string;
let operator: string;
const startedAt = new Date();

type TList = {
  events: { actor: string; action: string; outcome: string; targetLabel: string | null; reason: string }[];
  nextBefore: string | null;
};
const list = async (input: unknown, cookie = viewer) => {
  const res = await c.trpc("query", "audit.list", input, cookie);
  return {
    status: res.status,
    message: res.message,
    data: (res.json as { result?: { data: { json: TList } } }).result?.data.json,
  };
};

beforeAll(async () => {
  c = await startConsoleUnderTest("audit_router");
  viewer = (await c.signIn("viewer@sluice.local", DEMO_PASSWORD, { ip: "10.6.0.1" })).cookie!;
  operator = (await c.signIn("operator@sluice.local", DEMO_PASSWORD, { ip: "10.6.0.2" })).cookie!;
  expect((await c.signIn("operator@sluice.local", "wrong-password", { ip: "10.6.0.3" })).status).toBe(401);
  const team = await c.db.team.findUniqueOrThrow({ where: { slug: "payments-data" } });
  for (const name of ["audit-a", "audit-b"]) {
    await serveNewestVersion(
      c.db,
      (
        await c.db.pipeline.create({
          data: {
            name,
            ownerTeamId: team.id,
            versions: { create: { version: 1, spec: { name }, specHash: name } },
          },
        })
      ).id,
    );
  }
  expect(
    (
      await c.trpc(
        "mutation",
        "run.command",
        { pipeline: "audit-a", command: "start", reason: 'go, "now" =1+1' },
        operator,
      )
    ).status,
  ).toBe(200);
  expect(
    (
      await c.trpc(
        "mutation",
        "run.command",
        { pipeline: "audit-b", command: "start", reason: "b too" },
        operator,
      )
    ).status,
  ).toBe(200);
  expect(
    (
      await c.trpc(
        "mutation",
        "run.command",
        { pipeline: "audit-a", command: "pause", reason: "nope" },
        viewer,
      )
    ).status,
  ).toBe(403);
});
afterAll(async () => {
  await c?.close();
});

describe("audit.list", () => {
  it("has the failed sign-in, the refused action with its refusal, and each command with its reason", async () => {
    const all = (await list({ limit: 500 })).data!.events;
    expect(
      all.find(
        (e) => e.action === "auth.sign_in" && e.outcome === "refused" && e.actor === "operator@sluice.local",
      ),
    ).toBeDefined();
    expect(all.find((e) => e.action === "pipeline.lifecycle" && e.outcome === "refused")).toMatchObject({
      actor: "viewer@sluice.local",
      targetLabel: "audit-a",
      reason: expect.stringMatching(
        /^Only operator, owner \(of the pipeline's team\) or admin may start, pause, resume, stop or restart a pipeline/,
      ),
    });
    expect(
      all.filter((e) => e.action === "pipeline.start").map((e) => [e.actor, e.targetLabel, e.reason]),
    ).toEqual([
      ["operator@sluice.local", "audit-b", "b too"],
      ["operator@sluice.local", "audit-a", 'go, "now" =1+1'],
    ]);
  });

  it("filters by actor, action area, pipeline, outcome and time", async () => {
    const byPipeline = (await list({ pipeline: "audit-a" })).data!.events;
    expect(byPipeline.map((e) => [e.action, e.outcome])).toEqual([
      ["pipeline.lifecycle", "refused"],
      ["pipeline.start", "succeeded"],
    ]);
    const area = (await list({ action: "pipeline", actor: "OPERATOR@" })).data!.events;
    expect(area.map((e) => e.targetLabel)).toEqual(["audit-b", "audit-a"]);
    expect((await list({ outcome: "refused", target: "audit" })).data!.events.map((e) => e.actor)).toEqual([
      "viewer@sluice.local",
    ]);
    expect((await list({ from: new Date(Date.now() + 60_000) })).data!.events).toEqual([]);
    expect((await list({ from: startedAt, action: "pipeline.start" })).data!.events).toHaveLength(2);
  });

  it("pages with a cursor: no event twice, none missed", async () => {
    const all = (await list({ limit: 500 })).data!.events;
    const seen: string[] = [];
    let before: string | null = null;
    do {
      const page: TList = (await list({ limit: 2, ...(before ? { before } : {}) })).data!;
      seen.push(...page.events.map((e) => `${e.action}|${e.actor}|${e.reason}`));
      before = page.nextBefore;
    } while (before);
    expect(seen).toEqual(all.map((e) => `${e.action}|${e.actor}|${e.reason}`));
  });

  it("refuses a time range that ends before it starts, naming the field", async () => {
    const res = await list({ from: new Date("2026-12-02T00:00:00Z"), to: new Date("2026-12-01T00:00:00Z") });
    expect(res).toMatchObject({
      status: 400,
      message: "from: the start of the time range must be before its end",
    });
  });
});

describe("audit.exportCsv", () => {
  it("exports the filtered rows as CSV, oldest first, user text quoted and formulas neutralised", async () => {
    const res = await c.trpc("query", "audit.exportCsv", { action: "pipeline.start" }, viewer);
    const { csv, filename } = (res.json as { result: { data: { json: { csv: string; filename: string } } } })
      .result.data.json;
    expect(filename).toMatch(/^sluice-audit-\d{4}-\d{2}-\d{2}T\d{6}\.csv$/);
    const lines = csv.trimEnd().split("\r\n");
    expect(lines[0]).toBe(
      "id,occurred_at,actor,action,outcome,target_type,target_id,target,reason,before,after,origin,ip_address,user_agent",
    );
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain(",operator@sluice.local,pipeline.start,succeeded,pipeline,");
    expect(lines[1]).toContain(
      ',audit-a,"go, ""now"" =1+1","{""phase"":""stopped"",""version"":1}","{""phase"":""running"",""version"":1}",web,',
    );
    expect(lines[2]).toContain(",audit-b,b too,");
  });

  it("is refused to a signed-out caller", async () => {
    expect((await c.trpc("query", "audit.exportCsv", {}, null)).status).toBe(401);
  });
});
