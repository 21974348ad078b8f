// The webhook sink against a real local HTTP receiver, real Kafka and Postgres (issue 4 "Prove it"):
// - each alert is sent with its stable idempotency key, once; the delivery ledger records it;
// - a receiver answering 500 is retried with exponential backoff, the attempts and the last error are
//   in the ledger, and a key that never succeeds is given up after maxAttempts and becomes a dead
//   letter with the reason — visible, never silent;
// - a runner that was taken over stops sending at its next attempt (the ledger is fenced).
import { testProcessEnv } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { producePayments, simulatedClock, type Manifest } from "@sluice/producer";
import { totalOutcomes } from "../batch/outcomes";
import { FencedError } from "../errors";
import { PipelineRunner } from "../runner/pipeline-runner";
import type { BatchProgress } from "../store/progress-record";
import { registerPipelineVersion } from "../store/register-version";
import { createEngineFixture, ledgerSpec, type EngineFixture } from "../testing/engine-fixture";
import { startWebhookReceiver, type WebhookReceiver } from "../testing/webhook-receiver";

let fx: EngineFixture;
let manifest: Manifest;
const receivers: WebhookReceiver[] = [];

/** The fraud-alert pipeline of the demo: refunds and disputes, strict lateness, a webhook sink. */
function fraudSpec(topic: string, name: string, url: string, maxAttempts = 4) {
  return ledgerSpec(topic, {
    name,
    owner: "risk",
    source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 400 } },
    eventTime: { column: "event_time", watermarkDelay: "30s", idleTimeout: "1h" },
    expectations: [],
    transform: { filter: "type in ['refund', 'dispute']" },
    lateData: "drop",
    sink: {
      webhook: {
        url,
        idempotencyKey: ["event_id"],
        maxAttempts,
        // Long enough that a loaded machine's slow answer is still the receiver's 500, not a timeout:
        // the test counts attempts and reads the last error.
        timeout: "10s",
        headers: { "X-Source": "sluice" },
      },
    },
  });
}

const expectedAlerts = () =>
  [...manifest.events!.values()]
    .filter((e) => e.type === "refund" || e.type === "dispute")
    .map((e) => `KEY:${e.eventId}`);

beforeAll(async () => {
  fx = await createEngineFixture("webhook");
  ({ manifest } = await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: 1500,
    partitions: 3,
    seed: 31,
    clock: simulatedClock({ start: "2025-04-01T00:00:00Z", stepMs: 20 }),
    duplicateShare: 0.05,
    log: () => undefined,
  }));
});
afterAll(async () => {
  for (const r of receivers) await r.close();
  await fx?.close();
});

async function drain(runner: PipelineRunner): Promise<BatchProgress[]> {
  const progress: BatchProgress[] = [];
  for (;;) {
    const r = await runner.runBatch();
    if (r.kind === "empty") return progress;
    progress.push(r.progress);
  }
}

describe("webhook sink", () => {
  it("ssrf: a webhook sink pointed at a loopback address sends nothing unless SLUICE_OUTBOUND_ALLOW lists it; its rows become dead letters saying why", async () => {
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    const spec = fraudSpec(fx.topic, "fraud-alerts-ssrf", receiver.url, 3);
    const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
    // The process's settings, less the allowlist the integration tests run with.
    const env = (name: string) => (name === "SLUICE_OUTBOUND_ALLOW" ? undefined : testProcessEnv(name));
    const runner = await PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner: "test", env });
    const progress = await drain(runner).finally(() => runner.close());
    expect(receiver.requests).toEqual([]);
    const alerts = expectedAlerts().length;
    const dl = await fx.pool.query<{ reason: string }>(
      `SELECT reason FROM dead_letters WHERE pipeline_version_id = $1 AND outcome = 'dead_letter'`,
      [pipelineVersionId],
    );
    expect(dl.rows).toHaveLength(alerts);
    expect(dl.rows[0]!.reason).toMatch(
      /after 1 attempt\(s\): not sent: 127\.0\.0\.1 is a loopback address.*SLUICE_OUTBOUND_ALLOW/,
    );
    for (const p of progress) expect(totalOutcomes(p.outcomes)).toBe(p.inputRows);
  });

  it(
    "a receiver answering 500 is retried with backoff; attempts and errors are in the ledger; a key that never succeeds becomes a dead letter",
    { timeout: 120_000 },
    async () => {
      // Every key fails twice before it succeeds; keys ending in 7 never succeed.
      const receiver = await startWebhookReceiver({
        respond: ({ key, attempt }) => (key.endsWith("7") || attempt <= 2 ? 500 : 200),
      });
      receivers.push(receiver);
      const spec = fraudSpec(fx.topic, "fraud-alerts-500", receiver.url, 4);
      const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
      const runner = await PipelineRunner.open(fx.resources, {
        env: testProcessEnv,
        pipelineVersionId,
        spec,
        owner: "test",
        webhook: { backoffBaseMs: 100, concurrency: 16 },
      });
      const progress = await drain(runner).finally(() => runner.close());

      const alerts = expectedAlerts().map((k) => k.replace("KEY:", "fraud-alerts-500:"));
      const neverOk = alerts.filter((k) => k.endsWith("7"));
      expect(neverOk.length).toBeGreaterThan(0);
      expect([...receiver.applied.keys()].sort()).toEqual(alerts.filter((k) => !k.endsWith("7")).sort());
      // No key is sent again once it succeeded (nothing crashed here, so not even once).
      expect([...receiver.successes().values()].every((n) => n === 1)).toBe(true);

      // Backoff: the gaps between a key's attempts grow (100 ms, 200 ms, 400 ms).
      const times = receiver.requests.filter((r) => r.key === neverOk[0]).map((r) => r.at);
      expect(times).toHaveLength(4);
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      expect(gaps[0]).toBeGreaterThanOrEqual(95);
      expect(gaps[1]).toBeGreaterThanOrEqual(195);
      expect(gaps[2]).toBeGreaterThanOrEqual(395);

      // Visible in the ledger: delivered after 3 attempts with the last error kept; given up after 4.
      const ledger = await fx.pool.query<{ status: string; attempts: number; last_error: string; n: number }>(
        `SELECT status, attempts, last_error LIKE 'HTTP 500%' AS last_error, count(*)::int AS n FROM webhook_deliveries WHERE pipeline_version_id = $1 GROUP BY 1, 2, 3 ORDER BY 1`,
        [pipelineVersionId],
      );
      expect(ledger.rows).toEqual([
        { status: "delivered", attempts: 3, last_error: true, n: alerts.length - neverOk.length },
        { status: "failed", attempts: 4, last_error: true, n: neverOk.length },
      ]);
      // ...and as dead letters with the reason; every batch still balances.
      const dl = await fx.pool.query<{ reason: string }>(
        `SELECT reason FROM dead_letters WHERE pipeline_version_id = $1 AND outcome = 'dead_letter'`,
        [pipelineVersionId],
      );
      expect(dl.rows).toHaveLength(neverOk.length);
      expect(dl.rows[0]!.reason).toMatch(/webhook delivery failed after 4 attempt\(s\): HTTP 500/);
      // The receiver's own words stay in the ledger's last_response (shown to owners and operators
      // only), never in the error or the dead letter's reason, which everyone sees.
      expect(dl.rows.every((r) => !r.reason.includes("receiver says no"))).toBe(true);
      const answers = await fx.pool.query<{ last_response: string; n: number }>(
        `SELECT last_response, count(*)::int AS n FROM webhook_deliveries WHERE pipeline_version_id = $1 AND status = 'failed' GROUP BY 1`,
        [pipelineVersionId],
      );
      expect(answers.rows).toEqual([{ last_response: "receiver says no", n: neverOk.length }]);
      // Every request was signed with the pipeline's secret (Standard Webhooks).
      expect(receiver.requests.every((r) => r.verified)).toBe(true);
      for (const p of progress) expect(totalOutcomes(p.outcomes)).toBe(p.inputRows);
      const retries = progress.reduce((s, p) => s + Number(p.operator?.retries ?? 0), 0);
      expect(retries).toBe(2 * (alerts.length - neverOk.length) + 3 * neverOk.length);
      expect(
        receiver.requests.every((r) => r.body.event_id !== undefined && Object.keys(r.body).length === 10),
      ).toBe(true);
    },
  );

  it(
    "a runner taken over by another stops sending; the new one delivers the rest; no key is sent again after its recorded success",
    { timeout: 120_000 },
    async () => {
      let takeover: Promise<PipelineRunner> | undefined;
      const spec = () => fraudSpec(fx.topic, "fraud-alerts-fenced", receiver.url);
      const receiver = await startWebhookReceiver({
        respond: async () => {
          // Mid-way through the first runner's first batch, a second runner takes the lease.
          if (!takeover && receiver.requests.length === 20) {
            takeover = PipelineRunner.open(fx.resources, {
              env: testProcessEnv,
              pipelineVersionId,
              spec: spec(),
              owner: "second",
            });
            await takeover;
          }
          return 200;
        },
      });
      receivers.push(receiver);
      const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec());
      const first = await PipelineRunner.open(fx.resources, {
        env: testProcessEnv,
        pipelineVersionId,
        spec: spec(),
        owner: "first",
        webhook: { concurrency: 1 },
      });
      await expect(first.runBatch()).rejects.toBeInstanceOf(FencedError);
      await first.close();
      const sentByFirst = receiver.requests.length;
      expect(sentByFirst).toBeLessThanOrEqual(22);
      const second = await takeover!;
      await drain(second).finally(() => second.close());
      const alerts = expectedAlerts().map((k) => k.replace("KEY:", "fraud-alerts-fenced:"));
      expect([...receiver.applied.keys()].sort()).toEqual(alerts.sort());
      // Only the request in flight when the lease moved can be sent twice: the first runner's success for
      // it could not be recorded (fenced), so the second runner sends it again — and the receiver's
      // idempotency key absorbs it. No key is sent after its recorded success.
      const twice = [...receiver.successes()].filter(([, n]) => n > 1);
      expect(twice.length).toBeLessThanOrEqual(1);
      const ledger = await fx.pool.query<{ key: string; delivered_at: Date }>(
        `SELECT idempotency_key AS key, delivered_at FROM webhook_deliveries WHERE pipeline_version_id = $1 AND status = 'delivered'`,
        [pipelineVersionId],
      );
      expect(ledger.rows).toHaveLength(alerts.length);
      const deliveredAt = new Map(ledger.rows.map((r) => [r.key, r.delivered_at.getTime()]));
      expect(receiver.requests.filter((r) => r.at > deliveredAt.get(r.key)!)).toEqual([]);
    },
  );
});
