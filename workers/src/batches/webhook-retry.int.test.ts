// Guarantee proven: a webhook delivery that failed for good (receiver answering 500 until maxAttempts
// were used) is visible as `failed`; once an operator re-queues it — one key or all of them — the worker
// running the pipeline sends it again with the same idempotency key, and every key ends up applied by
// the receiver exactly once: a re-queued key that fails again is `failed` again, and a key whose success
// was recorded is never sent again (neither by the re-queue nor afterwards). Who re-queued and why is
// recorded. Real Kafka, Postgres, Redis, an in-process worker and a real local HTTP receiver.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { registerPipelineVersion } from "@sluice/engine";
import {
  createEngineFixture,
  ledgerSpec,
  startWebhookReceiver,
  type EngineFixture,
  type WebhookReceiver,
} from "@sluice/engine/testing";
import { producePayments } from "@sluice/producer";
import {
  findWebhookDeliveries,
  getPipelineRun,
  requeueFailedWebhookDeliveries,
  startPipelineRun,
  WebhookRequeueError,
} from "@sluice/services";
import type { WorkerApp } from "../app";
import { waitFor } from "@sluice/testing";
import { startTestWorker, workerConfig } from "../testing/worker-app-fixture";

const NAME = "fraud-retry";
const MAX_ATTEMPTS = 2;
let fx: EngineFixture;
let db: PrismaClient;
let app: WorkerApp;
let receiver: WebhookReceiver;
let alertKeys: string[];
/** While true, the receiver answers 500 to every key ending in 3 or 7. */
let broken = true;
const failing = (key: string) => /[37]$/.test(key);

beforeAll(async () => {
  fx = await createEngineFixture("webhook_retry");
  db = createPrismaClient(fx.pool);
  const { manifest } = await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: 800,
    partitions: 2,
    seed: 77,
    duplicateShare: 0.05,
    log: () => undefined,
  });
  alertKeys = [...manifest.events!.values()]
    .filter((e) => e.type === "refund" || e.type === "dispute")
    .map((e) => `${NAME}:${e.eventId}`);
  receiver = await startWebhookReceiver({ respond: ({ key }) => (broken && failing(key) ? 500 : 200) });
  app = await startTestWorker(workerConfig(fx.db.url));
});
afterAll(async () => {
  await app?.close(5000);
  await app?.queue.queue.obliterate({ force: true }).catch(() => undefined);
  await receiver?.close();
  await db?.$disconnect();
  await fx?.close();
});

const ledger = async () => (await findWebhookDeliveries(db, { pipeline: NAME, limit: 1000 }))!;
/** Requests the receiver answered with a 2xx, per key. */
const successes = (from = 0) => {
  const n = new Map<string, number>();
  for (const r of receiver.requests.slice(from)) if (r.status < 300) n.set(r.key, (n.get(r.key) ?? 0) + 1);
  return n;
};

describe("retrying failed webhook deliveries", () => {
  it(
    "failed deliveries are visible; re-queued, the worker sends each once with its key; delivered keys are never sent again",
    { timeout: 180_000 },
    async () => {
      const spec = ledgerSpec(fx.topic, {
        name: NAME,
        owner: "risk",
        expectations: [],
        transform: { filter: "type in ['refund', 'dispute']" },
        sink: {
          webhook: {
            url: receiver.url,
            idempotencyKey: ["event_id"],
            maxAttempts: MAX_ATTEMPTS,
            timeout: "2s",
          },
        },
        trigger: { every: "300ms" },
      });
      const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
      await startPipelineRun(
        db,
        { pipelineVersionId, actor: "user:test@sluice.local", reason: "test" },
        { scheduler: app.queue },
      );

      // 1. The receiver is broken for some keys: they are given up after maxAttempts and stay failed.
      const failingKeys = alertKeys.filter(failing).sort();
      expect(failingKeys.length).toBeGreaterThan(5);
      await waitFor(
        "every alert delivered or failed",
        async () => {
          const { counts } = await ledger();
          return counts.delivered + counts.failed === alertKeys.length && counts.pending === 0;
        },
        90_000,
      );
      const failed = (await findWebhookDeliveries(db, { pipeline: NAME, status: "failed", limit: 1000 }))!;
      expect(failed.deliveries.map((d) => d.key).sort()).toEqual(failingKeys);
      for (const d of failed.deliveries)
        expect(d).toMatchObject({
          attempts: MAX_ATTEMPTS,
          lastStatusCode: 500,
          lastError: expect.stringMatching(/^HTTP 500/),
          requeuedAt: null,
        });
      // The ledger is written in its own transactions before the batch commits; the batch's dead letters
      // come with its commit, a moment later (longer on a loaded machine).
      const deadLetters = async () =>
        (
          await fx.pool.query(
            `SELECT count(*)::int AS n FROM dead_letters WHERE pipeline_version_id = $1 AND reason LIKE 'webhook delivery failed%'`,
            [pipelineVersionId],
          )
        ).rows[0].n as number;
      await waitFor(
        "the failed deliveries' dead letters committed",
        async () => (await deadLetters()) >= failingKeys.length,
        60_000,
      );
      expect(await deadLetters()).toBe(failingKeys.length);
      const deliveredFirst = new Set([...successes().keys()]);
      expect(deliveredFirst.size).toBe(alertKeys.length - failingKeys.length);

      // A delivered key cannot be re-queued.
      const someDelivered = [...deliveredFirst][0]!;
      await expect(
        requeueFailedWebhookDeliveries(db, {
          pipeline: NAME,
          key: someDelivered,
          actor: "user:oncall@sluice.local",
        }),
      ).rejects.toThrow(WebhookRequeueError);

      // 2. One key re-queued while the receiver is still broken: sent again (same key), fails again, visible.
      const [first, ...rest] = failingKeys as [string, ...string[]];
      const beforeOne = receiver.requests.length;
      const one = await requeueFailedWebhookDeliveries(db, {
        pipeline: NAME,
        key: first,
        actor: "user:oncall@sluice.local",
        reason: "probe",
      });
      expect(one).toMatchObject({ requeued: 1, runningOnWorkers: true });
      await waitFor("the probe to fail again", async () =>
        (await ledger()).deliveries.find(
          (d) => d.key === first && d.status === "failed" && d.requeuedAt !== null,
        ),
      );
      expect(receiver.requests.slice(beforeOne).map((r) => [r.key, r.status])).toEqual(
        Array.from({ length: MAX_ATTEMPTS }, () => [first, 500]),
      );

      // 3. The receiver is fixed; that key, then all the others, are re-queued and delivered.
      broken = false;
      const afterFix = receiver.requests.length;
      await requeueFailedWebhookDeliveries(db, {
        pipeline: NAME,
        key: first,
        actor: "user:oncall@sluice.local",
        reason: "receiver fixed",
      });
      await waitFor(
        "the one key to be delivered",
        async () => (await ledger()).deliveries.find((d) => d.key === first)?.status === "delivered",
      );
      const all = await requeueFailedWebhookDeliveries(db, {
        pipeline: NAME,
        actor: "user:oncall@sluice.local",
        reason: "receiver fixed",
      });
      expect(all.requeued).toBe(rest.length);
      await waitFor(
        "every re-queued delivery to be delivered",
        async () => (await ledger()).counts.delivered === alertKeys.length,
        60_000,
      );

      // Exactly once per key: each failing key succeeded once, after the fix; nothing delivered before was sent again.
      const resent = receiver.requests.slice(afterFix);
      expect([...new Set(resent.map((r) => r.key))].sort()).toEqual(failingKeys);
      expect([...successes(afterFix).entries()].sort()).toEqual(failingKeys.map((k) => [k, 1]));
      expect(resent.filter((r) => deliveredFirst.has(r.key))).toEqual([]);
      expect([...successes().values()].every((n) => n === 1)).toBe(true);
      expect([...receiver.applied.keys()].sort()).toEqual([...alertKeys].sort());
      // The idempotency key and the body are the ones first claimed: the body still names the event.
      for (const r of resent) expect(r.key).toBe(`${NAME}:${String(r.body.event_id)}`);

      // Nothing left to retry: a no-op, not recorded.
      expect(
        await requeueFailedWebhookDeliveries(db, { pipeline: NAME, actor: "user:oncall@sluice.local" }),
      ).toMatchObject({ requeued: 0, requeueId: null });
      const audit = await fx.pool.query(
        `SELECT idempotency_key, deliveries, actor, reason FROM webhook_requeues ORDER BY id`,
      );
      expect(audit.rows).toEqual([
        { idempotency_key: first, deliveries: 1, actor: "user:oncall@sluice.local", reason: "probe" },
        {
          idempotency_key: first,
          deliveries: 1,
          actor: "user:oncall@sluice.local",
          reason: "receiver fixed",
        },
        {
          idempotency_key: null,
          deliveries: rest.length,
          actor: "user:oncall@sluice.local",
          reason: "receiver fixed",
        },
      ]);
      expect((await getPipelineRun(db, pipelineVersionId))?.phase).toBe("running");
    },
  );
});
