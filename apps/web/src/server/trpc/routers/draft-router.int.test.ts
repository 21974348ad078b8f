// Authoring through the console's real HTTP handler: a draft checked as you type (errors at their
// line and column), registered as version 1 and then version 2 with who and why, the history and its
// diff, an audit event per registration — and bad input answered with a clear message and nothing
// registered: YAML that does not parse, another team's owner slug, a huge paste, a sample over the
// limit, a credential in the spec, a breaking contract change (needs a change request).
import { defaultDraftForm, draftFromForm } from "@sluice/services/drafts/pure";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEMO_PASSWORD,
  startConsoleUnderTest,
  type TConsoleUnderTest,
} from "../../testing/console-under-test";

let c: TConsoleUnderTest;
let owner: string;

const draft = (over: Partial<ReturnType<typeof defaultDraftForm>> = {}) =>
  draftFromForm({
    ...defaultDraftForm({ owner: "payments-data", topic: "authoring-topic" }),
    name: "authored",
    table: "authored",
    ...over,
  });
const pipelines = () => c.db.pipeline.count();

beforeAll(async () => {
  c = await startConsoleUnderTest("draft_router");
  owner = (await c.signIn("owner@sluice.local", DEMO_PASSWORD)).cookie!;
});
afterAll(async () => {
  await c?.close();
});

describe("draft router", () => {
  it("a type error in an expectation is reported at its line and column", async () => {
    const text = draft().replace(
      "lateData:",
      "expectations:\n  - name: positive\n    expr: \"amount > 'zero'\"\n    action: drop\nlateData:",
    );
    const res = await c.trpc("query", "draft.check", { text }, owner);
    expect(res.status).toBe(200);
    const check = (
      res.json as {
        result: {
          data: { json: { ok: boolean; errors: { path: string; line: number; message: string }[] } };
        };
      }
    ).result.data.json;
    expect(check.ok).toBe(false);
    const line = text.split("\n").findIndex((l) => l.includes("amount > 'zero'")) + 1;
    expect(check.errors).toEqual([expect.objectContaining({ path: "expectations[0].expr", line })]);
  });

  it("registers version 1 and then version 2 with who and why; the history diffs them and each is audited", async () => {
    const v1 = await c.trpc(
      "mutation",
      "draft.submit",
      { text: draft(), reason: "first authored version" },
      owner,
    );
    expect(v1.status, v1.message).toBe(200);
    const v2 = await c.trpc(
      "mutation",
      "draft.submit",
      { text: draft({ description: "now described" }), reason: "describe it" },
      owner,
    );
    expect(v2.status, v2.message).toBe(200);
    const history = await c.trpc("query", "draft.history", { pipeline: "authored" }, owner);
    const entries = (
      history.json as {
        result: {
          data: { json: { version: number; registeredBy: string; reason: string; state: string }[] };
        };
      }
    ).result.data.json;
    expect(entries.map((e) => [e.version, e.registeredBy, e.reason])).toEqual([
      [2, "user:owner@sluice.local", "describe it"],
      [1, "user:owner@sluice.local", "first authored version"],
    ]);
    expect(entries[0]!.state).toBe("continued version 1's checkpoint and state");
    const diff = await c.trpc("query", "draft.diff", { pipeline: "authored", from: 1, to: 2 }, owner);
    expect(
      (diff.json as { result: { data: { json: { changes: { path: string }[]; stateCompatible: boolean } } } })
        .result.data.json,
    ).toMatchObject({ changes: [{ path: "description" }], stateCompatible: true });
    const audits = await c.db.auditEvent.findMany({
      where: { action: "pipeline.register", outcome: "succeeded" },
      orderBy: { occurredAt: "asc" },
    });
    expect(audits.map((a) => [a.actor, a.targetLabel, a.reason])).toEqual([
      ["owner@sluice.local", "authored version 1", "first authored version"],
      ["owner@sluice.local", "authored version 2", "describe it"],
    ]);
  });

  it("refuses bad input with a clear message and registers nothing", async () => {
    const before = await pipelines();
    const unparseable = await c.trpc(
      "mutation",
      "draft.submit",
      { text: "name: [unclosed\nowner: x", reason: "r" },
      owner,
    );
    expect(unparseable.status).toBe(400);
    expect(unparseable.message).toMatch(/YAML syntax error/);

    const otherTeam = await c.trpc(
      "mutation",
      "draft.submit",
      { text: draft({ name: "not-ours", owner: "risk", table: "not_ours" }), reason: "r" },
      owner,
    );
    expect(otherTeam.status).toBe(403);
    expect(otherTeam.message).toMatch(
      /only for your own teams' pipelines: "not-ours" — it belongs to Risk & Fraud; your teams: Payments Data/,
    );

    const huge = await c.trpc(
      "mutation",
      "draft.submit",
      { text: `${draft()}\n# ${"x".repeat(120_000)}`, reason: "r" },
      owner,
    );
    expect(huge.status).toBe(400);
    expect(huge.message).toMatch(/longer than 100,000 characters/);

    const bigSample = await c.trpc(
      "query",
      "draft.dryRun",
      { text: draft({ name: "sampled", table: "sampled" }), sample: { kind: "last", perPartition: 50_000 } },
      owner,
    );
    expect(bigSample.status).toBe(400);
    expect(bigSample.message).toMatch(/at most 1,000 records per partition/);

    const secret = draft({ name: "leaky", table: "leaky" }).replace(
      "format: json",
      "format: json\npassword: hunter2hunter2",
    );
    const leaky = await c.trpc("mutation", "draft.submit", { text: secret, reason: "r" }, owner);
    expect(leaky.status).toBe(400);
    expect(leaky.message).toMatch(/"password" looks like a secret, and secrets never go in a spec/);

    const breaking = draft().replace("    seq: int\n", "    seq: string\n");
    const refused = await c.trpc("mutation", "draft.submit", { text: breaking, reason: "retype seq" }, owner);
    expect(refused.status).toBe(403);
    expect(refused.message).toMatch(
      /needs a change request approved by someone else, so nothing was registered/,
    );
    expect(await pipelines()).toBe(before);
    expect(await c.db.pipelineVersion.count({ where: { pipeline: { name: "authored" } } })).toBe(2);
  });
});
