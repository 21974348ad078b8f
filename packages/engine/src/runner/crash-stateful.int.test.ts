// Exactly-once for stateful pipelines (product.md semantics 1 and 2; issue 4 "Prove it"): `sluice run`
// is SIGKILLed again and again at random moments while it drains a backlog through
//   - 5-minute windows in update mode with allowedLateness (window state, dedup state, late data),
//   - CDC SCD2 over shuffled changes spread across partitions (cdc state, history rewrites),
//   - a webhook sink whose receiver has the sender killed while requests are in flight;
// after a final clean run, the results are identical to an uninterrupted run (windows, CDC), and the
// receiver saw every alert applied exactly once, with no key sent again after its recorded success.
import { testProcessEnv } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Prng,
  produceCustomerChanges,
  producePayments,
  simulatedClock,
  type Manifest,
} from "@sluice/producer";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { totalOutcomes } from "../batch/outcomes";
import { registerPipelineVersion } from "../store/register-version";
import { customerStatusSpec, expectedScd2, SCD2_COLUMNS } from "../testing/cdc-fixture";
import {
  batchLog,
  createEngineFixture,
  ledgerSpec,
  pipelineVersionIds,
  type EngineFixture,
} from "../testing/engine-fixture";
import { finishRun, killIfRunning, runWithKills } from "../testing/kill-loop";
import { specDir, spawnSluice, type SluiceProcess } from "../testing/sluice-process";
import { startWebhookReceiver } from "../testing/webhook-receiver";
import { PipelineRunner } from "./pipeline-runner";

const MIN = 60_000;
let fx: EngineFixture;
let specs: Awaited<ReturnType<typeof specDir>>;
let manifest: Manifest;

beforeAll(async () => {
  fx = await createEngineFixture("crash-stateful");
  specs = await specDir();
  ({ manifest } = await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: 8000,
    partitions: 3,
    seed: 777,
    merchants: 15,
    clock: simulatedClock({ start: "2025-05-01T08:00:00Z", stepMs: 200 }),
    duplicateShare: 0.05,
    outOfOrderShare: 0.1,
    lateShare: 0.05,
    lateMinMs: 30_000,
    lateMaxMs: 6 * MIN,
    log: () => undefined,
  }));
});
afterAll(async () => {
  await specs?.cleanup();
  await fx?.close();
});

/** Drains a spec in this process, without interruption: the reference run. */
async function uninterrupted(spec: TPipelineSpec): Promise<string> {
  const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
  const runner = await PipelineRunner.open(fx.resources, {
    pipelineVersionId,
    spec,
    owner: "reference",
    env: testProcessEnv,
  });
  try {
    while ((await runner.runBatch()).kind === "committed");
  } finally {
    await runner.close();
  }
  return pipelineVersionId;
}

async function versionOf(name: string): Promise<string> {
  const ids = await pipelineVersionIds(fx.pool, name);
  expect(ids).toHaveLength(1);
  return ids[0]!;
}

async function expectBalancedGapFree(pipelineVersionId: string) {
  const log = await batchLog(fx.pool, pipelineVersionId);
  expect(log.map((b) => b.batchId)).toEqual(log.map((_, i) => i));
  for (const b of log) expect(totalOutcomes(b.outcomes as never)).toBe(b.input_rows);
  return log;
}

describe("crash tests on stateful pipelines", () => {
  it(
    "windows (update mode, allowedLateness): SIGKILLed 8 times, the result equals an uninterrupted run's",
    { timeout: 300_000 },
    async () => {
      const spec = (name: string, table: string) =>
        ledgerSpec(fx.topic, {
          name,
          source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 120 } },
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
              customers: "count_distinct(customer_id)",
            },
            outputMode: "update",
            allowedLateness: "2m",
          },
          sink: { postgres: { table } },
        });
      const referenceId = await uninterrupted(spec("settlements-reference", "settlements_reference"));
      const file = await specs.write(
        "settlements-crash",
        spec("settlements-crash", "settlements_crash") as unknown as Record<string, unknown>,
      );
      const run = await runWithKills(file, fx.db.url, { kills: 8, seed: "crash-windows" });

      const columns = `merchant_id, window_start, window_end, settled::text, refunded::text, events::int, customers::int, _batch_id::int`;
      const reference = await fx.pool.query(
        `SELECT ${columns} FROM settlements_reference ORDER BY window_start, merchant_id`,
      );
      const crashed = await fx.pool.query(
        `SELECT ${columns} FROM settlements_crash ORDER BY window_start, merchant_id`,
      );
      expect(crashed.rows.length).toBeGreaterThan(50);
      expect(crashed.rows).toEqual(reference.rows);

      const crashedId = await versionOf("settlements-crash");
      const log = await expectBalancedGapFree(crashedId);
      const refLog = await batchLog(fx.pool, referenceId);
      // Same batches, same decisions: outcomes and watermarks batch by batch; same state left behind.
      expect(log.map((b) => [b.outcomes, b.progress.watermark, b.progress.stateRows])).toEqual(
        refLog.map((b) => [b.outcomes, b.progress.watermark, b.progress.stateRows]),
      );
      const replayed = log.filter((b) => b.progress.replayed).length;
      console.log(`crash windows: ${JSON.stringify({ ...run, batches: log.length, replayed })}`);
      expect(run.kills).toBeGreaterThanOrEqual(6);
    },
  );

  it(
    "CDC SCD2 over shuffled changes: SIGKILLed 8 times, the history equals in-order application and an uninterrupted run",
    { timeout: 300_000 },
    async () => {
      const topic = `${fx.topic}-cdc`;
      const { feed } = await produceCustomerChanges({
        kafka: fx.kafka,
        topic,
        partitions: 3,
        keyBy: "change",
        seed: 23,
        changes: 4000,
        customers: 80,
        deleteShare: 0.1,
        shuffleShare: 0.3,
        duplicateShare: 0.03,
      });
      await uninterrupted(
        customerStatusSpec(topic, {
          name: "customers-reference",
          table: "customers_reference",
          scdType: 2,
          maxOffsetsPerTrigger: 150,
        }),
      );
      const file = await specs.write(
        "customers-crash",
        customerStatusSpec(topic, {
          name: "customers-crash",
          table: "customers_crash",
          scdType: 2,
          maxOffsetsPerTrigger: 150,
        }) as unknown as Record<string, unknown>,
      );
      const run = await runWithKills(file, fx.db.url, { kills: 8, seed: "crash-cdc" });

      const crashed = await fx.pool.query(
        `SELECT ${SCD2_COLUMNS} FROM customers_crash ORDER BY customer_id, valid_from`,
      );
      const reference = await fx.pool.query(
        `SELECT ${SCD2_COLUMNS} FROM customers_reference ORDER BY customer_id, valid_from`,
      );
      expect(crashed.rows).toEqual(expectedScd2(feed));
      expect(crashed.rows).toEqual(reference.rows);
      const log = await expectBalancedGapFree(await versionOf("customers-crash"));
      console.log(
        `crash cdc: ${JSON.stringify({ ...run, batches: log.length, replayed: log.filter((b) => b.progress.replayed).length })}`,
      );
      expect(run.kills).toBeGreaterThanOrEqual(6);
    },
  );

  it(
    "webhook: the sender is killed while requests are in flight and after successes; no key is applied twice or sent after its recorded success",
    { timeout: 300_000 },
    async () => {
      const rng = Prng.from("crash-webhook");
      let current: SluiceProcess | undefined;
      let kills = 0;
      let inFlightKills = 0;
      const KILLS = 6;
      const receiver = await startWebhookReceiver({
        respond: async () => {
          const child = current;
          if (child && kills < KILLS && rng.chance(0.03)) {
            kills++;
            if (rng.chance(0.5)) {
              // Between sending and recording the success: the request is here, the sender is gone.
              inFlightKills++;
              await killIfRunning(child);
            } else {
              // Between the recorded success and the batch commit (or a little later).
              setTimeout(() => void killIfRunning(child), rng.int(0, 40));
            }
          }
          return 200;
        },
      });
      try {
        const spec = ledgerSpec(fx.topic, {
          name: "alerts-crash",
          owner: "risk",
          source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 300 } },
          eventTime: { column: "event_time", watermarkDelay: "30m", idleTimeout: "1h" },
          expectations: [],
          transform: { filter: "type in ['refund', 'dispute']" },
          sink: {
            webhook: { url: receiver.url, idempotencyKey: ["event_id"], maxAttempts: 3, timeout: "2s" },
          },
        });
        const file = await specs.write("alerts-crash", spec as unknown as Record<string, unknown>);
        for (let round = 0; round < 40; round++) {
          current = spawnSluice(["run", file, "--until-caught-up"], { databaseUrl: fx.db.url });
          const { code, signal } = await current.exited;
          if (signal === "SIGKILL") continue;
          expect({ code, stderr: current.stderr.slice(-5) }).toEqual({
            code: 0,
            stderr: current.stderr.slice(-5),
          });
          if (current.stdout.some((l) => l.includes("caught up"))) break;
        }
        current = undefined;
        await finishRun(file, fx.db.url);

        const pv = await versionOf("alerts-crash");
        const log = await expectBalancedGapFree(pv);
        const expected = new Set(
          [...manifest.events!.values()]
            .filter((e) => e.type === "refund" || e.type === "dispute")
            .map((e) => `alerts-crash:${e.eventId}`),
        );
        const late = log.reduce((s, b) => s + Number((b.outcomes as { late: number }).late), 0);
        expect(late).toBe(0);
        // Every alert reached the receiver (which applies each key once)...
        expect([...receiver.applied.keys()].sort()).toEqual([...expected].sort());
        // ...recorded as delivered, and never sent again after that success was recorded.
        const ledger = await fx.pool.query<{ key: string; status: string; delivered_at: Date }>(
          `SELECT idempotency_key AS key, status, delivered_at FROM webhook_deliveries WHERE pipeline_version_id = $1`,
          [pv],
        );
        expect(ledger.rows.every((r) => r.status === "delivered")).toBe(true);
        expect(ledger.rows).toHaveLength(expected.size);
        const deliveredAt = new Map(ledger.rows.map((r) => [r.key, r.delivered_at.getTime()]));
        const afterSuccess = receiver.requests.filter((r) => r.at > deliveredAt.get(r.key)!);
        expect(afterSuccess).toEqual([]);
        const resent = receiver.requests.length - expected.size;
        console.log(
          `crash webhook: ${JSON.stringify({ kills, inFlightKills, requests: receiver.requests.length, keys: expected.size, resent, batches: log.length })}`,
        );
        expect(kills).toBe(KILLS);
        // A key is sent twice only when a kill landed between its request and its recorded success.
        expect(resent).toBeLessThanOrEqual(inFlightKills * 8 + (KILLS - inFlightKills) * 8);
        const sinkTotal = log.reduce((s, b) => s + Number((b.outcomes as { sink: number }).sink), 0);
        expect(sinkTotal).toBe(expected.size);
      } finally {
        await receiver.close();
      }
    },
  );
});
