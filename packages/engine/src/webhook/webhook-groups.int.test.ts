// A webhook sink in partition groups (source.kafka.parallelism), against a real local HTTP receiver:
// three `sluice run --group` processes SIGKILLed together again and again — mid-delivery, mid-commit —
// over events of which a quarter arrive again on a partition of another group. The delivery ledger is
// one row per key whichever group met it, each group's ledger writes fenced on its own lease:
// - every event's key reaches the receiver, and the ledger records each key delivered once;
// - a key is sent again only where a kill fell between a request and its recorded success (or two
//   groups met it at once): never after its recorded success;
// - keys the receiver always refuses are given up and become one dead letter each — not two, though
//   two groups met each of the duplicated ones — and every batch balances.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prng } from "@sluice/producer";
import type { Admin } from "kafkajs";
import { totalOutcomes } from "../batch/outcomes";
import type { BatchProgress } from "../store/progress-record";
import { createEngineFixture, ledgerSpec, type EngineFixture } from "../testing/engine-fixture";
import { killGroupsRepeatedly } from "../testing/group-kills";
import { sendLedgerEvents } from "../testing/ledger-events";
import { specDir } from "../testing/sluice-process";
import { startWebhookReceiver, type WebhookReceiver } from "../testing/webhook-receiver";

let fx: EngineFixture;
let admin: Admin;
let specs: Awaited<ReturnType<typeof specDir>>;
let receiver: WebhookReceiver | undefined;

beforeAll(async () => {
  fx = await createEngineFixture("hookgroups");
  admin = fx.kafka.admin();
  await admin.connect();
  specs = await specDir();
});
afterAll(async () => {
  await receiver?.close();
  await admin?.disconnect();
  await specs?.cleanup();
  await fx?.close();
});

describe("webhook sink in partition groups", () => {
  it(
    "three `sluice run --group` processes SIGKILLed together: every key delivered, recorded once, never sent after its recorded success",
    { timeout: 300_000 },
    async () => {
      const topic = `${fx.topic}-groups`;
      await admin.createTopics({ topics: [{ topic, numPartitions: 6 }], waitForLeaders: true });
      const partitions = [0, 1, 2, 3, 4, 5];
      // 1,200 events over the six partitions; then the first 300 again, each on the next partition —
      // a partition of another group (p mod 3 differs) — and 600 more.
      const first = await sendLedgerEvents(fx.kafka, topic, { prefix: "a", count: 1200, partitions });
      await sendLedgerEvents(fx.kafka, topic, { prefix: "a", count: 300, partitions: [1, 2, 3, 4, 5, 0] });
      const more = await sendLedgerEvents(fx.kafka, topic, { prefix: "b", count: 600, partitions });
      const name = "hook-groups";
      const keyOf = (id: string) => `${name}:${id}`;
      const expected = [...first.ids, ...more.ids].map(keyOf).sort();
      // Keys ending in 7 are always refused: given up after two attempts.
      const refused = expected.filter((k) => k.endsWith("7"));

      receiver = await startWebhookReceiver({ respond: ({ key }) => (key.endsWith("7") ? 500 : 200) });
      const spec = ledgerSpec(topic, {
        name,
        source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 90, parallelism: 3 } },
        expectations: [],
        sink: { webhook: { url: receiver.url, idempotencyKey: ["event_id"], maxAttempts: 2 } },
      });
      const file = await specs.write(name, spec as unknown as Record<string, unknown>);
      const { kills, killedWhileOthersRan } = await killGroupsRepeatedly({
        file,
        env: { databaseUrl: fx.db.url },
        groups: 3,
        rounds: 6,
        rng: Prng.from("webhook-groups-kills"),
      });

      const { rows } = await fx.pool.query<{ id: string }>(
        `SELECT v.id FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1`,
        [name],
      );
      const pipelineVersionId = rows[0]!.id;
      // Every key reached the receiver; the ledger has each key once, delivered or given up.
      expect([...receiver.applied.keys()].sort()).toEqual(expected.filter((k) => !k.endsWith("7")));
      const ledger = await fx.pool.query<{ key: string; status: string; delivered_at: Date | null }>(
        `SELECT idempotency_key AS key, status, delivered_at FROM webhook_deliveries WHERE pipeline_version_id = $1 ORDER BY 1`,
        [pipelineVersionId],
      );
      expect(ledger.rows.map((r) => r.key)).toEqual(expected);
      expect(ledger.rows.filter((r) => r.status === "failed").map((r) => r.key)).toEqual(refused);
      // Never sent after its recorded success.
      const deliveredAt = new Map(ledger.rows.map((r) => [r.key, r.delivered_at?.getTime() ?? Infinity]));
      expect(receiver.requests.filter((r) => r.at > deliveredAt.get(r.key)!)).toEqual([]);
      // The refused keys: one dead letter each, whichever group's batch committed the event.
      const dead = await fx.pool.query<{ event_id: string }>(
        `SELECT payload->>'event_id' AS event_id FROM dead_letters WHERE pipeline_version_id = $1 AND outcome = 'dead_letter' ORDER BY 1`,
        [pipelineVersionId],
      );
      expect(dead.rows.map((r) => keyOf(r.event_id))).toEqual(refused);
      // Every batch balances, the 300 repeats are duplicates, and all three groups committed batches.
      const batches = await fx.pool.query<{ progress: BatchProgress }>(
        `SELECT progress FROM batch_log WHERE pipeline_version_id = $1`,
        [pipelineVersionId],
      );
      for (const { progress: p } of batches.rows) expect(totalOutcomes(p.outcomes)).toBe(p.inputRows);
      const sum = (f: (p: BatchProgress) => number) => batches.rows.reduce((s, r) => s + f(r.progress), 0);
      expect(sum((p) => p.inputRows)).toBe(2100);
      expect(sum((p) => p.outcomes.duplicate)).toBe(300);
      expect(new Set(batches.rows.map((r) => r.progress.group?.no))).toEqual(new Set([0, 1, 2]));

      const repeats = [...receiver.successes()].filter(([, n]) => n > 1).length;
      console.log(
        `webhook in partition groups: ${JSON.stringify({ kills, killedWhileOthersRan, requests: receiver.requests.length, keys: expected.length, sentTwice: repeats })}`,
      );
      expect(killedWhileOthersRan).toBeGreaterThan(0);
    },
  );
});
