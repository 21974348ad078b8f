// Against real Postgres and a real local on-call receiver: the evaluator's lease fences a stale
// evaluator out; a fire is queued once however often a tick re-runs; a receiver answering 500 is
// retried with backoff and the failure is recorded and shown; bad input is refused naming the field.
// Notifications go out with the test process's outbound settings (127.0.0.1 allowed, a signing key).
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import {
  createTestDatabase,
  startOnCallReceiver,
  testProcessEnv,
  type TestDatabase,
  type TOnCallReceiver,
  serveNewestVersion,
} from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertAlertLease, AlertEvaluatorFencedError, takeAlertLease } from "./alert-lease";
import { deliverAlertNotifications, MAX_ATTEMPTS } from "./deliver-alert-notifications";
import { ensureDefaultRules } from "./ensure-default-rules";
import { findAlerts, getPipelineAlerts } from "./find-alerts";
import { acknowledgeAlert } from "./respond-to-alert";
import { runAlertEvaluation } from "./run-alert-evaluation";
import { silenceAlerts } from "./silence-alerts";
import { updateAlertRule } from "./update-alert-rule";
import { PIPELINE_RULE_KINDS, RULE_KINDS } from "./rule-kinds";
import { createContactPoint } from "../contact-points/manage-contact-points";

let database: TestDatabase;
let db: PrismaClient;
let teamId: string;
let receiver: TOnCallReceiver;
const admin = {
  actor: { id: "u-admin", email: "admin@sluice.local", name: "Admin", role: "admin" as const, teams: [] },
  from: { origin: "cli" as const },
};
const delivery = { env: testProcessEnv, publicUrl: "http://console.test", smtp: null };
const actor = { userId: null, label: "operator@sluice.local", from: { origin: "cli" as const } };
const KINDS = RULE_KINDS.filter((k) => k !== "no_worker_alive");

beforeAll(async () => {
  database = await createTestDatabase("alert_outbox");
  db = createPrismaClient(database.url);
  receiver = await startOnCallReceiver();
  teamId = (await db.team.create({ data: { slug: "payments-data", name: "Payments Data" } })).id;
  await createContactPoint(db, admin, {
    teamId,
    contactPoint: {
      name: "incident bridge",
      kind: "webhook",
      secret: { from: "value", value: `${receiver.httpUrl}/oncall/hooks/payments` },
    },
  });
});
afterAll(async () => {
  await receiver?.close();
  await db?.$disconnect();
  await database?.drop();
});

/** A pipeline whose run has failed batches: its batch_failures rule fires at once (for: 0). */
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
      lastError: "connection refused",
    },
  });
}

const evaluate = (owner = "w1") =>
  runAlertEvaluation(db, {
    evaluator: "workers",
    owner,
    leaseMs: 60_000,
    kinds: KINDS,
  });

describe("alert evaluation and the outbox", () => {
  it("every pipeline gets one rule of each kind, once, and the fleet its rules", async () => {
    await failingPipeline("rules-p");
    await ensureDefaultRules(db);
    await ensureDefaultRules(db);
    const rules = await db.alertRule.findMany({ where: { pipeline: { name: "rules-p" } } });
    expect(rules.map((r) => r.kind).sort()).toEqual([...PIPELINE_RULE_KINDS].sort());
    expect((await db.alertRule.findMany({ where: { pipelineId: null } })).map((r) => r.kind).sort()).toEqual([
      "no_worker_alive",
      "worker_heartbeat_missing",
    ]);
  });

  it("a stale evaluator is fenced: its lease is taken and its transaction refused", async () => {
    const mine = await takeAlertLease(db, "workers", "w1", 60_000);
    expect(mine).not.toBeNull();
    expect(await takeAlertLease(db, "workers", "w2", 60_000)).toBeNull(); // w1's lease is live
    await db.$executeRaw`UPDATE alert_evaluators SET lease_until = now() - interval '1 second' WHERE id = 'workers'`;
    const theirs = await takeAlertLease(db, "workers", "w2", 60_000);
    expect(theirs).toBe(mine! + 1n);
    await expect(
      db.$transaction((tx) => assertAlertLease(tx, "workers", "w1", mine!)),
    ).rejects.toBeInstanceOf(AlertEvaluatorFencedError);
    expect(await evaluate("w1")).toEqual({ evaluated: false, reason: "lease held by another evaluator" });
    // A worker handed the job takes over a live lease ("latest wins"): the holder's epoch is fenced off.
    const taken = await runAlertEvaluation(db, {
      evaluator: "workers",
      owner: "w3",
      leaseMs: 60_000,
      kinds: KINDS,
      takeover: true,
    });
    expect(taken).toMatchObject({ evaluated: true, epoch: theirs! + 1n });
    await expect(
      db.$transaction((tx) => assertAlertLease(tx, "workers", "w2", theirs!)),
    ).rejects.toBeInstanceOf(AlertEvaluatorFencedError);
    await db.$executeRaw`UPDATE alert_evaluators SET lease_until = NULL WHERE id = 'workers'`;
  });

  it("fires once however often the tick runs; a 500 is retried with backoff, then fails visibly", async () => {
    await failingPipeline("hooks-p");
    for (let i = 0; i < MAX_ATTEMPTS; i++)
      receiver.answerNext("webhook", { status: 500, body: "receiver is down" });
    for (let i = 0; i < 3; i++) await evaluate();
    const episodes = await db.alertEpisode.findMany({
      where: { rule: { pipeline: { name: "hooks-p" } } },
      include: { rule: true },
    });
    expect(episodes.map((e) => [e.rule.kind, e.state])).toEqual([["batch_failures", "firing"]]);
    const outbox = await db.alertNotification.findMany({ where: { episodeId: episodes[0]!.id } });
    expect(outbox.map((n) => n.kind)).toEqual(["fire"]);

    let refused = 0;
    // Only this notification is due (rules-p's pipeline is failing too, and fired as well).
    await db.$executeRaw`UPDATE alert_notifications SET next_attempt_at = now() + interval '1 day' WHERE id <> ${outbox[0]!.id}`;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      // Time travel: the backoff has passed.
      await db.$executeRaw`UPDATE alert_notifications SET next_attempt_at = now() WHERE id = ${outbox[0]!.id}`;
      const r = await deliverAlertNotifications(db, { ...delivery, retryBaseMs: 1000 });
      refused++;
      expect(r).toEqual(
        attempt < MAX_ATTEMPTS
          ? { delivered: 0, retrying: 1, failed: 0 }
          : { delivered: 0, retrying: 0, failed: 1 },
      );
      const n = await db.alertNotification.findUniqueOrThrow({ where: { id: outbox[0]!.id } });
      expect(n.attempts).toBe(attempt);
      if (attempt === 1)
        expect(n.nextAttemptAt.getTime() - n.lastAttemptAt!.getTime()).toBeGreaterThanOrEqual(900); // backoff, not at once
      if (attempt === 2)
        expect(n.nextAttemptAt.getTime() - n.lastAttemptAt!.getTime()).toBeGreaterThanOrEqual(1900);
    }
    // Every attempt reached the receiver (each answered 500), and nothing was applied there.
    expect(refused).toBe(MAX_ATTEMPTS);
    expect(receiver.pages.filter((p) => p.channel === "webhook")).toEqual([]);
    const failed = await db.alertNotification.findUniqueOrThrow({ where: { id: outbox[0]!.id } });
    expect(failed.status).toBe("failed");
    expect(failed.lastStatusCode).toBe(500);
    expect(failed.lastError).toBe("HTTP 500 (incident bridge) — gave up after 8 attempts");
    expect(failed.lastResponse).toBe("receiver is down");
    // Shown with the alert (the Alerts page reads findAlerts); the stored URL's path never is.
    const shown = (await findAlerts(db, { pipeline: "hooks-p" }))[0]!;
    expect(shown.deliveries).toEqual([
      {
        kind: "fire",
        status: "failed",
        attempts: MAX_ATTEMPTS,
        lastError: failed.lastError,
        lastResponse: "receiver is down",
        to: "incident bridge (webhook)",
      },
    ]);
    expect(JSON.stringify(shown)).not.toContain("/oncall/hooks/payments");
  });

  it("a team without a contact point: the notification says nobody was paged and what to do", async () => {
    const lonely = await db.team.create({ data: { slug: "lonely", name: "Lonely Team" } });
    const p = await db.pipeline.create({
      data: {
        name: "lonely-p",
        ownerTeamId: lonely.id,
        versions: { create: { version: 1, spec: {}, specHash: "l" } },
      },
      include: { versions: true },
    });
    await serveNewestVersion(db, p.id);
    await db.pipelineRun.create({
      data: {
        pipelineVersionId: p.versions[0]!.id,
        desiredState: "running",
        status: "failed",
        lastError: "boom",
      },
    });
    await evaluate();
    const n = await db.alertNotification.findFirstOrThrow({ where: { team: { slug: "lonely" } } });
    expect(n).toMatchObject({ status: "failed", attempts: 0, contactPointId: null });
    expect(n.lastError).toBe(
      "nobody paged: Lonely Team has no enabled contact point — an admin adds one on the Admin page (Teams → Contact points)",
    );
    const fired = await db.alertEpisodeEvent.findFirstOrThrow({
      where: { episodeId: n.episodeId!, type: "notified" },
    });
    expect(fired.note).toBe(n.lastError);
  });

  it("a silence suppresses the notification but not the alert; acknowledging is recorded", async () => {
    await failingPipeline("quiet-p");
    await ensureDefaultRules(db);
    await silenceAlerts(db, actor, {
      pipeline: "quiet-p",
      expiresAt: new Date(Date.now() + 3600_000),
      reason: "source maintenance",
    });
    await evaluate();
    const page = (await getPipelineAlerts(db, "quiet-p"))!;
    expect(page.open.map((a) => [a.kind, a.state, a.silenced])).toEqual([["batch_failures", "firing", true]]);
    expect(await db.alertNotification.count({ where: { episodeId: BigInt(page.open[0]!.id) } })).toBe(0);
    await acknowledgeAlert(db, actor, { episodeId: page.open[0]!.id, pipeline: "quiet-p", note: "on it" });
    const after = (await getPipelineAlerts(db, "quiet-p"))!;
    expect(after.open[0]).toMatchObject({
      state: "acknowledged",
      acknowledgedBy: "operator@sluice.local",
      ackNote: "on it",
    });
    expect(after.history[0]!.events.map((e) => e.type)).toEqual(["fired", "suppressed", "acknowledged"]);
    expect(
      await db.auditEvent.count({ where: { action: "alert.acknowledge", targetId: page.open[0]!.id } }),
    ).toBe(1);
  });

  it("bad input is refused with a message naming the field", async () => {
    const refusal = async (p: Promise<unknown>) => {
      const err = await p.then(
        () => null,
        (e: Error) => e,
      );
      return err?.message ?? "accepted";
    };
    expect(
      await refusal(
        updateAlertRule(db, actor, { pipeline: "quiet-p", kind: "dead_letter_rate", threshold: 5 }),
      ),
    ).toContain("threshold: 5 makes no sense for dead_letter_rate; use 0 to 1");
    expect(
      await refusal(updateAlertRule(db, actor, { pipeline: "quiet-p", kind: "freshness", forSeconds: -5 })),
    ).toContain("forSeconds: 0 or more seconds");
    expect(
      await refusal(
        updateAlertRule(db, actor, { pipeline: "quiet-p", kind: "batch_failures", threshold: null }),
      ),
    ).toContain("threshold: batch_failures needs a threshold");
    expect(
      await refusal(silenceAlerts(db, actor, { pipeline: "quiet-p", reason: "maintenance" } as never)),
    ).toContain("expiresAt: a silence needs an expiry");
    expect(
      await refusal(
        silenceAlerts(db, actor, {
          pipeline: "quiet-p",
          reason: "maintenance",
          expiresAt: new Date(Date.now() - 1000),
        }),
      ),
    ).toContain("expiresAt: must be in the future");
    expect(
      await refusal(
        silenceAlerts(db, actor, { pipeline: "quiet-p", expiresAt: new Date(Date.now() + 1000) } as never),
      ),
    ).toContain("reason: say why");
    // A sensible change is accepted and audited.
    await updateAlertRule(db, actor, {
      pipeline: "quiet-p",
      kind: "freshness",
      threshold: 120,
      forSeconds: 30,
    });
    expect(await db.auditEvent.count({ where: { action: "alert.rule_change" } })).toBe(1);
  });
});
