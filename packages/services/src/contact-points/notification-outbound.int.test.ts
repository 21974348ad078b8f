// Alert notifications through the one outbound door (#19 item 4), against real Postgres and real
// local HTTP receivers: a contact point at the metadata address or at a loopback receiver that is not
// allowed gets nothing (connections counted at the socket) and its notification says why; an allowed
// receiver gets every notification signed with the team's Standard Webhooks secret, which verifies
// with the `standardwebhooks` package — and does not with another team's.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { signingSecretFor } from "@sluice/outbound-http";
import { createTestDatabase, testProcessEnv, type TestDatabase, serveNewestVersion } from "@sluice/testing";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliverAlertNotifications } from "../alerts/deliver-alert-notifications";
import { RULE_KINDS } from "../alerts/rule-kinds";
import { runAlertEvaluation } from "../alerts/run-alert-evaluation";
import { createContactPoint, removeContactPoint } from "./manage-contact-points";
import { sendTestNotification } from "./send-test-notification";

interface TReceiver {
  url: string;
  connections: number;
  requests: { path: string; headers: http.IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}

/** A plain HTTP receiver on 127.0.0.1 that records every connection and request, answering 200. */
async function receiver(): Promise<TReceiver> {
  const r = { connections: 0, requests: [] as TReceiver["requests"] };
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      r.requests.push({ path: req.url ?? "", headers: req.headers, body });
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
  });
  server.on("connection", () => r.connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return Object.assign(r, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

const SIGNING_KEY = testProcessEnv("SLUICE_SIGNING_KEY")!;
const admin = {
  actor: { id: "u-admin", email: "admin@sluice.local", name: "Admin", role: "admin" as const, teams: [] },
  from: { origin: "cli" as const },
};
const KINDS = RULE_KINDS.filter((k) => k !== "no_worker_alive");
const ROUTING_KEY = "R0UT1NGKEY0123456789abcdefABCDEF";

let database: TestDatabase;
let db: PrismaClient;
let hooks: TReceiver;
let teamId: string;

beforeAll(async () => {
  database = await createTestDatabase("notification_outbound");
  db = createPrismaClient(database.url);
  hooks = await receiver();
  teamId = (await db.team.create({ data: { slug: "risk", name: "Risk" } })).id;
});
afterAll(async () => {
  await hooks?.close();
  await db?.$disconnect();
  await database?.drop();
});

async function failingPipeline(name: string): Promise<void> {
  const p = await db.pipeline.create({
    data: {
      name,
      ownerTeamId: teamId,
      versions: { create: { version: 1, spec: { name, trigger: { every: "2s" } }, specHash: name } },
    },
    include: { versions: true },
  });
  await serveNewestVersion(db, p.id);
  await db.pipelineRun.create({
    data: {
      pipelineVersionId: p.versions[0]!.id,
      desiredState: "running",
      status: "running",
      consecutiveFailures: 4,
      lastError: "boom",
    },
  });
  await runAlertEvaluation(db, {
    evaluator: "workers",
    owner: "w1",
    leaseMs: 60_000,
    kinds: KINDS,
    takeover: true,
  });
}

/** Only this team's contact points, named after the test. */
async function contactPoints(
  points: { name: string; kind: "webhook" | "slack" | "pagerduty"; url: string }[],
): Promise<string[]> {
  for (const old of await db.contactPoint.findMany({ where: { teamId } }))
    await removeContactPoint(db, admin, { id: old.id });
  const ids: string[] = [];
  for (const p of points) {
    await createContactPoint(db, admin, {
      teamId,
      contactPoint:
        p.kind === "pagerduty"
          ? { name: p.name, kind: p.kind, secret: { from: "value", value: ROUTING_KEY }, endpoint: p.url }
          : { name: p.name, kind: p.kind, secret: { from: "value", value: p.url } },
    });
    ids.push((await db.contactPoint.findFirstOrThrow({ where: { teamId, name: p.name } })).id);
  }
  return ids;
}

describe("alert notifications through the outbound door", () => {
  it("ssrf: a contact point at 169.254.169.254 or at a loopback receiver that is not allowed is sent nothing, and its notification says why", async () => {
    await contactPoints([
      { name: "metadata", kind: "webhook", url: "http://169.254.169.254/latest/meta-data/" },
      { name: "loopback", kind: "slack", url: `${hooks.url}/slack/risk` },
      { name: "loopback pd", kind: "pagerduty", url: `${hooks.url}/v2/enqueue` },
    ]);
    await failingPipeline("scoring");
    const before = hooks.connections;
    // Nothing is allowed: this process's own receiver on 127.0.0.1 is as internal as Postgres.
    const env = (name: string) => (name === "SLUICE_OUTBOUND_ALLOW" ? "" : testProcessEnv(name));
    expect(await deliverAlertNotifications(db, { env, publicUrl: null, smtp: null })).toEqual({
      delivered: 0,
      retrying: 0,
      failed: 3,
    });
    expect(hooks.connections).toBe(before);
    const rows = await db.alertNotification.findMany({
      where: { episode: { rule: { pipeline: { name: "scoring" } } } },
      include: { contactPoint: true },
    });
    const by = Object.fromEntries(rows.map((r) => [r.contactPoint!.name, r]));
    expect(by.metadata).toMatchObject({
      status: "failed",
      attempts: 1,
      lastStatusCode: null,
      lastResponse: null,
    });
    expect(by.metadata!.lastError).toMatch(
      /^not sent: 169\.254\.169\.254 is a link-local address.*SLUICE_OUTBOUND_ALLOW.* \(metadata\) — not retried$/,
    );
    for (const name of ["loopback", "loopback pd"]) {
      expect(by[name]).toMatchObject({ status: "failed", attempts: 1 });
      expect(by[name]!.lastError).toMatch(
        /^not sent: 127\.0\.0\.1 is a loopback address.*SLUICE_OUTBOUND_ALLOW/,
      );
    }

    // The Admin page's "Send test notification" goes through the same door.
    const [metadata] = await contactPoints([
      { name: "metadata", kind: "webhook", url: "http://169.254.169.254/latest/meta-data/" },
    ]);
    const test = await sendTestNotification(
      db,
      admin,
      { id: metadata! },
      { env, publicUrl: null, smtp: null },
    );
    expect(test).toMatchObject({ delivered: false, status: null });
    expect(test.error).toMatch(/^not sent: 169\.254\.169\.254 is a link-local address/);
    expect(hooks.connections).toBe(before);
  });

  it("signed: an allowed receiver gets Slack, PagerDuty and webhook notifications that verify with the team's secret (standardwebhooks), not with another team's", async () => {
    await contactPoints([
      { name: "bridge", kind: "webhook", url: `${hooks.url}/oncall/bridge` },
      { name: "#risk", kind: "slack", url: `${hooks.url}/slack/risk` },
      { name: "pd", kind: "pagerduty", url: `${hooks.url}/v2/enqueue` },
    ]);
    await failingPipeline("limits");
    hooks.requests.length = 0;
    // The test process allows 127.0.0.1 and has a signing key.
    const opts = { env: testProcessEnv, publicUrl: null, smtp: null };
    expect(await deliverAlertNotifications(db, opts)).toEqual({ delivered: 3, retrying: 0, failed: 0 });
    expect(hooks.requests.map((r) => r.path).sort()).toEqual([
      "/oncall/bridge",
      "/slack/risk",
      "/v2/enqueue",
    ]);

    const risk = new Webhook(signingSecretFor(SIGNING_KEY, { kind: "team", slug: "risk" }));
    const other = new Webhook(signingSecretFor(SIGNING_KEY, { kind: "team", slug: "payments-data" }));
    const keys = await db.alertNotification.findMany({
      where: { episode: { rule: { pipeline: { name: "limits" } } } },
      select: { dedupKey: true },
    });
    for (const r of hooks.requests) {
      const headers = r.headers as Record<string, string>;
      expect(headers["webhook-id"]).toBe(headers["x-sluice-notification"]);
      expect(keys.map((k) => k.dedupKey)).toContain(headers["webhook-id"]);
      expect(Math.abs(Number(headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
      expect(risk.verify(r.body, headers)).toEqual(JSON.parse(r.body));
      expect(() => other.verify(r.body, headers)).toThrow();
      // A forged body under the same headers does not verify.
      expect(() => risk.verify(r.body.replace("limits", "forged"), headers)).toThrow();
    }

    // Without a signing key nothing is sent, and the notification says how to fix it.
    const [bridge] = await contactPoints([
      { name: "bridge", kind: "webhook", url: `${hooks.url}/oncall/bridge` },
    ]);
    const before = hooks.connections;
    const unsigned = await sendTestNotification(
      db,
      admin,
      { id: bridge! },
      {
        env: (name) => (name === "SLUICE_SIGNING_KEY" ? undefined : testProcessEnv(name)),
        publicUrl: null,
        smtp: null,
      },
    );
    expect(unsigned.delivered).toBe(false);
    expect(unsigned.error).toMatch(/^not sent: .*SLUICE_SIGNING_KEY, which is not set here/);
    expect(hooks.connections).toBe(before);
  });
});
