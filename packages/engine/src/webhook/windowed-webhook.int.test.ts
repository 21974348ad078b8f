// Guarantee proven: an aggregate's result sent to a webhook (tumbling windows, outputMode append) —
// each window is sent exactly once, when the watermark finalizes it, under the idempotency key
// `<pipeline>:<groupBy values>:<window_start>`, and the bodies equal the windows recomputed with one SQL
// query over the raw events read back from Kafka (late rows excluded by the same watermark); a window
// whose delivery is given up is `failed` in the ledger (no dead letter: a window is no input row, every
// batch still balances), and once re-queued it is sent again by the runner with the same key and the
// same body bytes. Real Kafka, Postgres and a local HTTP receiver.
import { testProcessEnv } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { producePayments, simulatedClock } from "@sluice/producer";
import { totalOutcomes } from "../batch/outcomes";
import { PipelineRunner } from "../runner/pipeline-runner";
import type { BatchProgress } from "../store/progress-record";
import { registerPipelineVersion } from "../store/register-version";
import { createEngineFixture, ledgerSpec, type EngineFixture } from "../testing/engine-fixture";
import { judgedEventsSql, loadReferenceBatches, loadReferenceEvents } from "../testing/reference-events";
import { startWebhookReceiver, type WebhookReceiver } from "../testing/webhook-receiver";
import { openRequeuedDeliveries } from "./requeued-deliveries";

const NAME = "settlements-hook";
const MIN = 60_000;
let fx: EngineFixture;
let receiver: WebhookReceiver;
/** While set, the receiver answers 500 to every window of this merchant. */
let refusedMerchant: string | undefined;

beforeAll(async () => {
  fx = await createEngineFixture("windowed_webhook");
  await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: 3000,
    partitions: 3,
    seed: 5150,
    merchants: 6,
    clock: simulatedClock({ start: "2025-05-01T08:00:00Z", stepMs: 1000 }),
    duplicateShare: 0.05,
    outOfOrderShare: 0.1,
    lateShare: 0.1,
    lateMinMs: 30_000,
    lateMaxMs: 8 * MIN,
    log: () => undefined,
  });
  await loadReferenceEvents(fx.pool, fx.kafka, fx.topic);
  receiver = await startWebhookReceiver({
    respond: ({ body }) => (body.merchant_id === refusedMerchant ? 500 : 200),
  });
});
afterAll(async () => {
  await receiver?.close();
  await fx?.close();
});

describe("aggregate → webhook", () => {
  it(
    "each final window is sent once with its key and equals the recomputation; a refused window is failed, then re-sent with the same key and body",
    { timeout: 180_000 },
    async () => {
      refusedMerchant = (
        await fx.pool.query<{ m: string }>(
          `SELECT min(merchant_id) AS m FROM ref_events WHERE type IN ('settlement', 'refund')`,
        )
      ).rows[0]!.m;
      const spec = ledgerSpec(fx.topic, {
        name: NAME,
        source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 500 } },
        eventTime: { column: "event_time", watermarkDelay: "2m", idleTimeout: "1h" },
        expectations: [],
        transform: { filter: "type in ['settlement', 'refund']" },
        aggregate: {
          window: { tumbling: "5m" },
          groupBy: ["merchant_id"],
          measures: {
            settled: "sum(amount)",
            refunded: "sum(amount) if type == 'refund'",
            events: "count()",
            largest: "max(amount)",
            mean: "avg(amount)",
          },
          outputMode: "append",
          allowedLateness: "1m",
        },
        sink: { webhook: { url: receiver.url, maxAttempts: 2, timeout: "2s" } },
      });
      const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
      const runner = await PipelineRunner.open(fx.resources, {
        env: testProcessEnv,
        pipelineVersionId,
        spec,
        owner: "test",
        webhook: { backoffBaseMs: 20 },
      });
      const progress: BatchProgress[] = [];
      try {
        for (let r = await runner.runBatch(); r.kind === "committed"; r = await runner.runBatch())
          progress.push(r.progress);
      } finally {
        await runner.close();
      }
      await loadReferenceBatches(fx.pool, [pipelineVersionId]);
      const finalWatermark = progress.at(-1)!.watermark!;

      // Every request carries the window's stable key.
      for (const r of receiver.requests)
        expect(r.key).toBe(
          `${NAME}:${String(r.body.merchant_id)}:${encodeURIComponent(String(r.body.window_start))}`,
        );
      const delivered = receiver.requests.filter((r) => r.status < 300);
      const refused = receiver.requests.filter((r) => r.status >= 300);
      // Sent once: no key succeeded twice; a refused window was tried maxAttempts times, never more.
      expect(new Set(delivered.map((r) => r.key)).size).toBe(delivered.length);
      const refusedKeys = [...new Set(refused.map((r) => r.key))].sort();
      expect(refusedKeys.length).toBeGreaterThan(2);
      expect(refused).toHaveLength(2 * refusedKeys.length);

      // The bodies (delivered and refused) are exactly the final windows, as SQL recomputes them.
      const firstBodies = [
        ...delivered,
        ...refused.filter((r, i) => refused.findIndex((x) => x.key === r.key) === i),
      ].map((r) => r.body);
      const diff = await fx.pool.query(
        `WITH ${judgedEventsSql(2 * MIN)},
       accepted AS (SELECT DISTINCT ON (event_id) * FROM ref_judged
                     WHERE type IN ('settlement', 'refund') AND (prev_watermark IS NULL OR event_time >= prev_watermark - interval '1 minute')
                     ORDER BY event_id, batch_id),
       windows AS (
         SELECT merchant_id, to_timestamp(floor(extract(epoch FROM event_time) / 300) * 300) AS window_start,
                to_timestamp(floor(extract(epoch FROM event_time) / 300) * 300 + 300) AS window_end,
                sum(amount) AS settled, coalesce(sum(amount) FILTER (WHERE type = 'refund'), 0) AS refunded, count(*)::int AS events,
                max(amount) AS largest, round(avg(amount), 6) AS mean
           FROM accepted GROUP BY 1, 2, 3),
       -- final: window end + allowedLateness (1m) behind the last watermark
       expected AS (SELECT * FROM windows WHERE window_end + interval '1 minute' <= $2::timestamptz),
       received AS (
         SELECT b->>'merchant_id', (b->>'window_start')::timestamptz, (b->>'window_end')::timestamptz, (b->>'settled')::numeric,
                (b->>'refunded')::numeric, (b->>'events')::int, (b->>'largest')::numeric, (b->>'mean')::numeric
           FROM jsonb_array_elements($1::jsonb) b)
       SELECT 'missing' AS side, * FROM (SELECT * FROM expected EXCEPT ALL SELECT * FROM received) m
       UNION ALL SELECT 'unexpected', * FROM (SELECT * FROM received EXCEPT ALL SELECT * FROM expected) u`,
        [JSON.stringify(firstBodies), finalWatermark],
      );
      expect(firstBodies.length).toBeGreaterThan(30);
      expect(diff.rows).toEqual([]);
      // The stream exercised the paths that decide which rows count: late beyond the policy, late but accepted, duplicates.
      const sum = (f: (p: BatchProgress) => number) => progress.reduce((n, p) => n + f(p), 0);
      console.log(
        `windowed webhook: ${JSON.stringify({ windows: firstBodies.length, late: sum((p) => p.outcomes.late), lateAccepted: sum((p) => p.lateAccepted ?? 0), duplicate: sum((p) => p.outcomes.duplicate) })}`,
      );
      expect(sum((p) => p.outcomes.late)).toBeGreaterThan(2);
      expect(sum((p) => p.lateAccepted ?? 0)).toBeGreaterThan(2);
      expect(sum((p) => p.outcomes.duplicate)).toBeGreaterThan(2);

      // A refused window is failed in the ledger with its error; it is no dead letter, and every batch balances.
      const ledger = await fx.pool.query<{ status: string; n: number }>(
        `SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY 1 ORDER BY 1`,
      );
      expect(ledger.rows).toEqual([
        { status: "delivered", n: delivered.length },
        { status: "failed", n: refusedKeys.length },
      ]);
      const deadLetters = await fx.pool.query(
        `SELECT count(*)::int AS n FROM dead_letters WHERE reason LIKE 'webhook%'`,
      );
      expect(deadLetters.rows[0].n).toBe(0);
      expect(progress.reduce((s, p) => s + Number(p.operator?.failed ?? 0), 0)).toBe(refusedKeys.length);
      for (const p of progress) expect(totalOutcomes(p.outcomes)).toBe(p.inputRows);

      // The receiver is fixed and the failed windows re-queued (the ledger state requeueFailedWebhookDeliveries
      // in @sluice/services leaves; that function is tested with the workers): the runner re-sends each once,
      // with the same key and the same body bytes as its first attempt.
      refusedMerchant = undefined;
      await fx.pool.query(
        `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, requeued_at = now() WHERE status = 'failed'`,
      );
      const before = receiver.requests.length;
      const resender = await PipelineRunner.open(fx.resources, {
        pipelineVersionId,
        spec,
        owner: "resend",
        env: testProcessEnv,
      });
      try {
        const requeued = await openRequeuedDeliveries(
          { pool: fx.pool, pipelineVersionId, env: testProcessEnv },
          spec,
        );
        expect(await requeued!.send(resender.leaseEpoch)).toEqual({
          found: refusedKeys.length,
          sent: refusedKeys.length,
          alreadyDelivered: 0,
          retries: 0,
          failed: 0,
        });
        expect(await requeued!.send(resender.leaseEpoch)).toMatchObject({ found: 0, sent: 0 });
      } finally {
        await resender.close();
      }
      const resent = receiver.requests.slice(before);
      expect(resent.map((r) => r.key).sort()).toEqual(refusedKeys);
      for (const r of resent)
        expect(JSON.stringify(r.body)).toBe(JSON.stringify(refused.find((x) => x.key === r.key)!.body));
      // Each window succeeded exactly once: refused ones only after their re-queue, none repeated after success.
      expect([...receiver.successes().values()].every((n) => n === 1)).toBe(true);
      expect(receiver.successes().size).toBe(delivered.length + refusedKeys.length);
    },
  );
});
