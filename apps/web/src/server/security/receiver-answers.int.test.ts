// What a receiver answered (a webhook sink's non-2xx body, an alert notification's refused request)
// can say anything — here an internal service's banner with a credential in it. The probe found it
// shown to every viewer. Now the tRPC answers carry it only to the people who run the pipeline (its
// team's owners, operators, admins); everyone else gets the status and error without it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_PASSWORD, startConsoleUnderTest, type TConsoleUnderTest } from "../testing/console-under-test";

let c: TConsoleUnderTest;
const cookies: Record<string, string> = {};
const BANNER = "db01.corp.internal PostgreSQL 15.4 — password=hunter2";

beforeAll(async () => {
  c = await startConsoleUnderTest("receiver-answers");
  for (const who of ["viewer", "owner", "operator", "admin"])
    cookies[who] = (
      await c.signIn(`${who}@sluice.local`, DEMO_PASSWORD, { ip: `10.50.0.${who.length}` })
    ).cookie!;
  // A failed delivery of two webhook pipelines as the engine leaves it: fraud-hook (Risk & Fraud)
  // and payments-hook (Payments Data, the demo owner's team).
  for (const [pipeline, slug] of [
    ["fraud-hook", "risk"],
    ["payments-hook", "payments-data"],
  ] as const) {
    const team = await c.db.team.findUniqueOrThrow({ where: { slug } });
    await c.db.pipeline.create({
      data: {
        name: pipeline,
        ownerTeamId: team.id,
        versions: { create: { version: 1, spec: { name: pipeline }, specHash: "h" } },
      },
    });
    await c.db.$executeRawUnsafe(
      `INSERT INTO webhook_deliveries (pipeline_id, idempotency_key, status, attempts, last_status_code, last_error, last_response, payload, pipeline_version_id, batch_id, last_attempt_at)
       SELECT v.pipeline_id, $1, 'failed', 8, 500, 'HTTP 500 (attempt 8 of 8)', $2, '{}'::jsonb, v.id, 0, now()
         FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $3 ORDER BY v.version DESC LIMIT 1`,
      `${pipeline}:e1`,
      BANNER,
      pipeline,
    );
  }
  // A refused alert notification (a test notification: no alert behind it).
  const team = await c.db.team.findFirstOrThrow({ select: { id: true } });
  await c.db.alertNotification.create({
    data: {
      teamId: team.id,
      kind: "test",
      dedupKey: "receiver-answers:test",
      status: "failed",
      attempts: 1,
      lastStatusCode: 500,
      lastError: "HTTP 500",
      lastResponse: BANNER,
      payload: {},
    },
  });
});
afterAll(async () => {
  await c?.close();
});

type TFailed = {
  receiverAnswers: "shown" | "hidden";
  receiverAnswersHidden?: string;
  deliveries: { lastError: string | null; lastResponse: string | null }[];
};
const failed = async (who: string, pipeline: string) => {
  const res = await c.trpc("query", "webhook.failed", { pipeline }, cookies[who]!);
  expect(res.status).toBe(200);
  return (res.json as { result: { data: { json: TFailed } } }).result.data.json;
};

describe("receiver answers", () => {
  it("receiver bodies: a viewer sees a failed webhook delivery's status, never what the receiver answered", async () => {
    const seen = await failed("viewer", "fraud-hook");
    expect(seen.deliveries).toEqual([
      expect.objectContaining({ lastError: "HTTP 500 (attempt 8 of 8)", lastResponse: null }),
    ]);
    expect(seen.receiverAnswers).toBe("hidden");
    expect(seen.receiverAnswersHidden).toMatch(
      /^The receiver's answers are shown to the pipeline's owners and operators only/,
    );
    expect(JSON.stringify(seen)).not.toContain("hunter2");
  });

  it("receiver bodies: an owner sees them for their own team's pipeline only; operators and admins for every pipeline", async () => {
    expect((await failed("owner", "payments-hook")).deliveries[0]!.lastResponse).toBe(BANNER);
    const otherTeam = await failed("owner", "fraud-hook");
    expect(otherTeam.deliveries[0]!.lastResponse).toBeNull();
    expect(JSON.stringify(otherTeam)).not.toContain("hunter2");
    for (const who of ["operator", "admin"])
      expect((await failed(who, "fraud-hook")).deliveries[0]!.lastResponse, who).toBe(BANNER);
  });

  it("receiver bodies: alert notifications' receiver answers go to operators and admins, not to viewers", async () => {
    const notifications = async (who: string) => {
      const res = await c.trpc("query", "alert.notifications", undefined, cookies[who]!);
      expect(res.status).toBe(200);
      return (
        res.json as { result: { data: { json: { lastError: string; lastResponse: string | null }[] } } }
      ).result.data.json;
    };
    const viewer = await notifications("viewer");
    expect(viewer).toEqual([expect.objectContaining({ lastError: "HTTP 500", lastResponse: null })]);
    expect(JSON.stringify(viewer)).not.toContain("hunter2");
    expect((await notifications("owner"))[0]!.lastResponse).toBeNull();
    expect((await notifications("operator"))[0]!.lastResponse).toBe(BANNER);
  });
});
