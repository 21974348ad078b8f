// Paging through every kind of contact point, against real Postgres and a real local on-call receiver
// that checks each receiver's own format (Slack's incoming webhook, PagerDuty's Events API v2, an SMTP
// server, Sluice's webhook event): an alert fires → a PagerDuty trigger, a Slack message, an email and
// a webhook event; acknowledging it in Sluice → PagerDuty `acknowledge` with the same dedup key (the
// incident is acknowledged), a Slack message, an email in the same thread; resolving → `resolve`.
// Refusals that retrying cannot fix fail at once with the receiver's answer; 429 waits for Retry-After;
// a test notification lands in the contact point's history; secrets never come back. The receiver
// verifies every HTTP request's signature with the team's secret (standardwebhooks) and refuses others.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { signingSecretFor } from "@sluice/outbound-http";
import {
  createTestDatabase,
  startOnCallReceiver,
  testProcessEnv,
  type TestDatabase,
  type TOnCallReceiver,
  serveNewestVersion,
} from "@sluice/testing";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliverAlertNotifications } from "../alerts/deliver-alert-notifications";
import { acknowledgeAlert, resolveAlert } from "../alerts/respond-to-alert";
import { RULE_KINDS } from "../alerts/rule-kinds";
import { runAlertEvaluation } from "../alerts/run-alert-evaluation";
import { findAdminTeams } from "../admin/teams";
import { findContactPoints } from "./find-contact-points";
import { createContactPoint, removeContactPoint, updateContactPoint } from "./manage-contact-points";
import { sendTestNotification } from "./send-test-notification";

let database: TestDatabase;
let db: PrismaClient;
let receiver: TOnCallReceiver;
let teamId: string;
const ROUTING_KEY = "R0UT1NGKEY0123456789abcdefABCDEF";
const admin = {
  actor: { id: "u-admin", email: "admin@sluice.local", name: "Admin", role: "admin" as const, teams: [] },
  from: { origin: "cli" as const },
};
const actor = { userId: null, label: "operator@sluice.local", from: { origin: "cli" as const } };
let opts: Parameters<typeof deliverAlertNotifications>[1];
const KINDS = RULE_KINDS.filter((k) => k !== "no_worker_alive");

beforeAll(async () => {
  database = await createTestDatabase("contact_points");
  db = createPrismaClient(database.url);
  const team = new Webhook(
    signingSecretFor(testProcessEnv("SLUICE_SIGNING_KEY")!, { kind: "team", slug: "payments-data" }),
  );
  receiver = await startOnCallReceiver({
    verify(body, headers) {
      try {
        team.verify(body, headers as Record<string, string>);
        return undefined;
      } catch (err) {
        return (err as Error).message;
      }
    },
  });
  opts = {
    // The routing key, and the outbound settings of the test process (127.0.0.1 allowed, a signing key).
    env: (name) => (name === "PAYMENTS_PD_KEY" ? ROUTING_KEY : testProcessEnv(name)),
    publicUrl: "http://console.test",
    smtp: { url: receiver.smtpUrl, from: "Sluice alerts <alerts@sluice.test>" },
  };
  teamId = (await db.team.create({ data: { slug: "payments-data", name: "Payments Data" } })).id;
  const add = (contactPoint: Parameters<typeof createContactPoint>[2]["contactPoint"]) =>
    createContactPoint(db, admin, { teamId, contactPoint });
  await add({
    name: "#payments-oncall",
    kind: "slack",
    secret: { from: "value", value: `${receiver.httpUrl}/slack/payments-oncall` },
  });
  await add({
    name: "PagerDuty primary",
    kind: "pagerduty",
    secret: { from: "env", name: "PAYMENTS_PD_KEY" },
    endpoint: `${receiver.httpUrl}/pagerduty/v2/enqueue`,
  });
  await add({ name: "on-call mailbox", kind: "email", addresses: ["payments-oncall@sluice.test"] });
  await add({
    name: "incident bridge",
    kind: "webhook",
    secret: { from: "value", value: `${receiver.httpUrl}/oncall/hooks/bridge` },
  });
});
afterAll(async () => {
  await receiver?.close();
  await db?.$disconnect();
  await database?.drop();
});

async function failingPipeline(name: string, owner = teamId): Promise<void> {
  const p = await db.pipeline.create({
    data: {
      name,
      ownerTeamId: owner,
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
}
const evaluate = () =>
  runAlertEvaluation(db, {
    evaluator: "workers",
    owner: "w1",
    leaseMs: 60_000,
    kinds: KINDS,
    takeover: true,
  });
const deliver = async () => {
  await db.$executeRaw`UPDATE alert_notifications SET next_attempt_at = now() WHERE status = 'pending'`;
  return deliverAlertNotifications(db, opts);
};
const received = (channel: string) => receiver.pages.filter((p) => p.channel === channel);

describe("contact points", () => {
  it("fire, acknowledge and resolve reach Slack, PagerDuty (one dedup key), email (one thread) and the webhook", async () => {
    await failingPipeline("ledger");
    await evaluate();
    const episode = await db.alertEpisode.findFirstOrThrow({
      where: { rule: { pipeline: { name: "ledger" } } },
    });
    expect(await deliver()).toEqual({ delivered: 4, retrying: 0, failed: 0 });
    const key = `sluice-alert-${episode.id}`;
    expect(received("pagerduty")).toEqual([expect.objectContaining({ action: "trigger", key })]);
    const trigger = received("pagerduty")[0]!.body as {
      payload: Record<string, unknown>;
      client_url: string;
    };
    expect(trigger.payload).toMatchObject({
      severity: "critical",
      source: "ledger",
      class: "batch_failures",
      group: "Payments Data",
    });
    expect(trigger.client_url).toBe("http://console.test/pipelines/ledger");
    expect(received("slack")).toEqual([
      expect.objectContaining({ to: "#payments-oncall", action: "FIRING" }),
    ]);
    expect(received("slack")[0]!.summary).toContain(
      "critical Pipeline failed or batches failing on ledger v1",
    );
    expect(received("webhook")).toEqual([
      expect.objectContaining({
        action: "alert.fired",
        key: `${episode.id}:${(await cp("incident bridge")).id}:fire`,
      }),
    ]);
    const [fireMail] = received("email");
    expect(fireMail).toMatchObject({ to: "payments-oncall@sluice.test", action: "FIRING" });
    expect(fireMail!.summary).toBe("[FIRING] critical Pipeline failed or batches failing on ledger v1");
    expect((fireMail!.body as { text: string }).text).toContain(
      "Open in Sluice: http://console.test/pipelines/ledger",
    );

    await acknowledgeAlert(db, actor, {
      episodeId: String(episode.id),
      pipeline: "ledger",
      note: "looking at the broker",
    });
    expect(await deliver()).toEqual({ delivered: 4, retrying: 0, failed: 0 });
    expect(received("pagerduty").map((p) => [p.action, p.key])).toEqual([
      ["trigger", key],
      ["acknowledge", key],
    ]);
    expect(receiver.incidents.get(key)?.state).toBe("acknowledged");
    expect(received("slack")[1]!.summary).toContain(
      "[ACKNOWLEDGED] critical Pipeline failed or batches failing on ledger v1 by operator@sluice.local: “looking at the broker”",
    );
    const ackMail = received("email")[1]!;
    expect(ackMail.summary).toBe("[ACKNOWLEDGED] critical Pipeline failed or batches failing on ledger v1");
    expect((ackMail.body as { inReplyTo: string }).inReplyTo).toBe(fireMail!.key);
    expect(received("webhook")[1]).toMatchObject({ action: "alert.acknowledged" });

    await db.pipelineRun.updateMany({
      where: { pipelineVersion: { pipeline: { name: "ledger" } } },
      data: { consecutiveFailures: 0 },
    });
    await resolveAlert(db, actor, { episodeId: String(episode.id), pipeline: "ledger", note: "broker back" });
    expect(await deliver()).toEqual({ delivered: 4, retrying: 0, failed: 0 });
    expect(received("pagerduty").map((p) => p.action)).toEqual(["trigger", "acknowledge", "resolve"]);
    expect(receiver.incidents.get(key)).toEqual({
      state: "resolved",
      events: ["trigger", "acknowledge", "resolve"],
    });
    expect(received("email").map((m) => m.action)).toEqual(["FIRING", "ACKNOWLEDGED", "RESOLVED"]);
    const events = await db.alertEpisodeEvent.findMany({
      where: { episodeId: episode.id },
      orderBy: { id: "asc" },
    });
    expect(events.map((e) => e.type)).toEqual([
      "fired",
      "notified",
      "acknowledged",
      "notified_acknowledged",
      "resolved",
      "notified_resolved",
    ]);
    expect(events[1]!.note).toBe(
      "to Payments Data: #payments-oncall (slack), PagerDuty primary (pagerduty), on-call mailbox (email), incident bridge (webhook)",
    );
  });

  it("a refusal retrying cannot fix fails at once; 429 waits for Retry-After; a 500 is retried", async () => {
    await failingPipeline("refused");
    await evaluate();
    receiver.answerNext("slack", { status: 404, body: "no_service" });
    receiver.answerNext("pagerduty", { status: 429, headers: { "retry-after": "120" } });
    receiver.answerNext("webhook", { status: 503, body: "down for maintenance" });
    await db.contactPoint.update({
      where: { id: (await cp("on-call mailbox")).id },
      data: { addresses: ["nobody@refused.invalid"] },
    });
    const before = Date.now();
    expect(await deliverAlertNotifications(db, opts)).toEqual({ delivered: 0, retrying: 2, failed: 2 });
    const rows = await db.alertNotification.findMany({
      where: { episode: { rule: { pipeline: { name: "refused" } } } },
      include: { contactPoint: true },
    });
    const by = Object.fromEntries(rows.map((r) => [r.contactPoint!.kind, r]));
    expect(by.slack).toMatchObject({ status: "failed", attempts: 1, lastStatusCode: 404 });
    expect(by.slack!.lastError).toBe(
      "HTTP 404 (Slack refused the message: check the webhook URL is still installed and its channel exists) (#payments-oncall) — not retried: the receiver refused the request itself",
    );
    // The receiver's own words are kept apart (shown only to who runs the pipeline).
    expect(by.slack!.lastResponse).toBe("no_service");
    expect(by.email).toMatchObject({ status: "failed", attempts: 1, lastStatusCode: 550 });
    expect(by.email!.lastError).toContain("no such mailbox");
    expect(by.pagerduty).toMatchObject({ status: "pending", lastStatusCode: 429 });
    expect(by.pagerduty!.nextAttemptAt.getTime() - before).toBeGreaterThanOrEqual(119_000);
    expect(by.webhook).toMatchObject({
      status: "pending",
      lastStatusCode: 503,
      lastError: "HTTP 503 (incident bridge)",
      lastResponse: "down for maintenance",
    });
    // The Admin page shows each contact point's last error and what is retrying.
    const views = await findContactPoints(db, [teamId]);
    expect(views.find((v) => v.kind === "slack")!.lastError?.error).toContain("no_service");
    expect(views.find((v) => v.kind === "pagerduty")!.retrying).toBe(1);
    await db.contactPoint.update({
      where: { id: (await cp("on-call mailbox")).id },
      data: { addresses: ["payments-oncall@sluice.test"] },
    });
    expect(await deliver()).toEqual({ delivered: 2, retrying: 0, failed: 0 });
  });

  it("a test notification is sent now, answered in place and kept in the history; secrets never come back", async () => {
    const slack = await cp("#payments-oncall");
    const ok = await sendTestNotification(db, admin, { id: slack.id }, opts);
    expect(ok).toEqual({ delivered: true, error: null, status: 200 });
    expect(receiver.pages.at(-1)).toMatchObject({ channel: "slack", action: "TEST" });
    const pd = await cp("PagerDuty primary");
    const missing = await sendTestNotification(db, admin, { id: pd.id }, { ...opts, env: () => undefined });
    expect(missing.delivered).toBe(false);
    expect(missing.error).toBe(
      "PagerDuty primary reads its routing key from the environment variable PAYMENTS_PD_KEY, which is not set here: set it on the workers and the console, and restart them",
    );
    const view = (await findContactPoints(db, [teamId])).find((v) => v.id === slack.id)!;
    expect(view.history[0]).toMatchObject({ kind: "test", status: "delivered", alertId: null });
    expect(view.lastDeliveredAt).not.toBeNull();
    expect(view.target).toMatch(/^webhook URL stored \(host 127\.0\.0\.1:\d+; never shown\)$/);
    const shown = JSON.stringify(
      [await findAdminTeams(db), await db.auditEvent.findMany()],
      (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v),
    );
    expect(shown).not.toContain("/slack/payments-oncall");
    expect(shown).not.toContain(ROUTING_KEY);
    expect((await findContactPoints(db, [teamId])).find((v) => v.id === pd.id)!.target).toBe(
      "routing key from $PAYMENTS_PD_KEY",
    );
  });

  it("bad input is refused naming the field; a removed contact point keeps its history", async () => {
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => "accepted",
        (e: { issues?: { path: PropertyKey[]; message: string }[]; message: string }) =>
          e.issues?.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") ?? e.message,
      );
    const create = (contactPoint: Record<string, unknown>) =>
      createContactPoint(db, admin, { teamId, contactPoint } as never);
    expect(
      await refusal(create({ name: "pd", kind: "pagerduty", secret: { from: "value", value: "short" } })),
    ).toBe(
      "contactPoint.secret: A PagerDuty routing key is the 32-character Integration Key of an Events API v2 integration",
    );
    expect(
      await refusal(
        create({ name: "s", kind: "slack", secret: { from: "value", value: "ftp://x.example/hook" } }),
      ),
    ).toBe("contactPoint.secret: The webhook URL starts with https:// (or http:// on a private network)");
    expect(await refusal(create({ name: "m", kind: "email", addresses: [] }))).toBe(
      "contactPoint.addresses: An email contact point needs at least one recipient",
    );
    expect(await refusal(create({ name: "n", kind: "slack" }))).toBe(
      "A new slack contact point needs its secret: an environment variable's name or the value",
    );
    expect(
      await refusal(
        create({ name: "#payments-oncall", kind: "webhook", secret: { from: "env", name: "X_URL" } }),
      ),
    ).toBe('The team already has a contact point named "#payments-oncall".');
    const bridge = await cp("incident bridge");
    await updateContactPoint(db, admin, {
      id: bridge.id,
      contactPoint: { name: "incident bridge", kind: "webhook", enabled: false },
    });
    expect((await cp("incident bridge")).secretValue).toBe(`${receiver.httpUrl}/oncall/hooks/bridge`); // kept
    const delivered = await db.alertNotification.count({ where: { contactPointId: bridge.id } });
    expect(delivered).toBeGreaterThan(0);
    await removeContactPoint(db, admin, { id: bridge.id });
    expect(await db.alertNotification.count({ where: { contactPointId: null } })).toBe(delivered);
    expect(await db.auditEvent.count({ where: { action: { startsWith: "team.contact_point" } } })).toBe(8);
  });
});

async function cp(name: string) {
  return db.contactPoint.findFirstOrThrow({ where: { teamId, name } });
}
