// Partition groups (source.kafka.parallelism): one ledger version read by several runners at once, one
// per group of partitions, each with its own lease, striped batch ids and commits, merged into the
// version's checkpoint. What must hold is what holds for one runner: every event id exactly once in
// the sink — also when the same event arrives on partitions of two groups — every offset read once,
// each batch re-running its recorded plan; the version's watermark the minimum over all partitions.
import { setTimeout as sleep } from "node:timers/promises";
import type { Admin } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prng, producePayments } from "@sluice/producer";
import { validateSpec } from "@sluice/pipeline-spec";
import { FencedError } from "../errors";
import { auditExactlyOnce } from "../testing/exactly-once-audit";
import {
  createEngineFixture,
  drainRunner,
  ledgerSpec,
  pipelineVersionIds,
  type EngineFixture,
} from "../testing/engine-fixture";
import { sendLedgerEvents } from "../testing/ledger-events";
import { killGroupsRepeatedly } from "../testing/group-kills";
import { specDir } from "../testing/sluice-process";
import { registerPipelineVersion } from "../store/register-version";
import { lockCheckpoint, resetCheckpoint } from "../store/checkpoint-store";
import { PipelineRunner } from "./pipeline-runner";
import { retryRecorder } from "../testing/held-commit";

let fx: EngineFixture;
let admin: Admin;
let specs: Awaited<ReturnType<typeof specDir>>;

beforeAll(async () => {
  fx = await createEngineFixture("groups");
  admin = fx.kafka.admin();
  await admin.connect();
  specs = await specDir();
});
afterAll(async () => {
  await admin?.disconnect();
  await specs?.cleanup();
  await fx?.close();
});

async function createTopic(topic: string, partitions: number) {
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
}

/** The same ids sent twice, the second time each on another partition (of another group when the partition count is the group count). */
async function sendAcrossPartitions(topic: string, prefix: string, count: number, partitions: number[]) {
  const first = await sendLedgerEvents(fx.kafka, topic, { prefix, count, partitions });
  const shifted = [...partitions.slice(1), partitions[0]!];
  await sendLedgerEvents(fx.kafka, topic, { prefix, count, partitions: shifted });
  return first.ids;
}

describe("partition groups", () => {
  it(
    "two groups committing the same events from different partitions at once: the second sees the first's keys, runs again, and counts them duplicates",
    { timeout: 120_000 },
    async () => {
      const topic = `${fx.topic}-dedup`;
      await createTopic(topic, 2);
      // Keyed by (event_id, payment_id), so the ledger keeps dedup state: the cross-group check is its insert.
      const spec = ledgerSpec(topic, {
        name: "groups-dedup",
        source: {
          kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 5_000, parallelism: 2 },
        },
        sink: { postgres: { table: "groups_dedup", key: ["event_id", "payment_id"] } },
      });
      const ids = await sendAcrossPartitions(topic, "x", 1_500, [0, 1]);
      const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
      const { logger, retries } = retryRecorder();
      const open = (group: number) =>
        PipelineRunner.open(
          { pool: fx.pool, kafka: fx.kafka, logger },
          { pipelineVersionId, spec, owner: `test-g${group}`, group },
        );
      const runners = [await open(0), await open(1)];

      // Hold the version's checkpoint row, which each group's commit takes last: both groups process
      // and insert their keys, then wait; released, one commits and the other finds its keys taken.
      const holder = await fx.pool.connect();
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM checkpoints WHERE pipeline_version_id = $1 FOR UPDATE`, [
        pipelineVersionId,
      ]);
      const drained = runners.map((r) => drainRunner(r));
      await sleep(3_000);
      await holder.query("COMMIT");
      holder.release();
      const progress = (await Promise.all(drained)).flat();

      expect(retries.length).toBeGreaterThan(0);
      const sink = await fx.pool.query<{ event_id: string }>(`SELECT event_id FROM groups_dedup`);
      expect(sink.rows.map((r) => r.event_id).sort()).toEqual([...ids].sort());
      const sum = (f: (p: (typeof progress)[number]) => number) => progress.reduce((s, p) => s + f(p), 0);
      expect({
        input: sum((p) => p.inputRows),
        sink: sum((p) => p.outcomes.sink),
        duplicate: sum((p) => p.outcomes.duplicate),
      }).toEqual({ input: 3_000, sink: 1_500, duplicate: 1_500 });
      // Striped ids: group 0 commits even ids, group 1 odd ones.
      for (const p of progress) expect(p.batchId % 2).toBe(p.sources.every((s) => s.partition === 0) ? 0 : 1);

      // The version's checkpoint merged both groups: every partition's clock and offsets, the watermark
      // their minimum less the delay (48h), the state both groups' keys.
      const cp = await fx.pool.query<{
        end_offsets: Record<string, number>;
        watermark: Date;
        event_time_max: { partitions: Record<string, { max: string }> };
        state_rows: string;
      }>(
        `SELECT end_offsets, watermark, event_time_max, state_rows FROM checkpoints WHERE pipeline_version_id = $1`,
        [pipelineVersionId],
      );
      const row = cp.rows[0]!;
      expect(row.end_offsets).toEqual({ "0": 1_500, "1": 1_500 });
      const clocks = row.event_time_max.partitions;
      expect(Object.keys(clocks).sort()).toEqual(["0", "1"]);
      const oldest = Math.min(...Object.values(clocks).map((c) => Date.parse(c.max)));
      expect(row.watermark.getTime()).toBe(oldest - 48 * 3600_000);
      expect(Number(row.state_rows)).toBe(1_500);
    },
  );

  it(
    "a second runner of the same group fences the first; other groups go on",
    { timeout: 60_000 },
    async () => {
      const topic = `${fx.topic}-fence`;
      await createTopic(topic, 2);
      const spec = ledgerSpec(topic, {
        name: "groups-fence",
        source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 100, parallelism: 2 } },
        sink: { postgres: { table: "groups_fence" } },
      });
      const ids = (await sendLedgerEvents(fx.kafka, topic, { prefix: "f", count: 400, partitions: [0, 1] }))
        .ids;
      const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
      const open = (group: number, owner: string) =>
        PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner, group });
      const stale = await open(0, "stale");
      const other = await open(1, "other");
      expect((await other.runBatch()).kind).toBe("committed");
      const taker = await open(0, "taker");
      await expect(stale.runBatch()).rejects.toThrow(FencedError);
      await stale.close();
      await drainRunner(taker);
      await drainRunner(other);
      const sink = await fx.pool.query<{ event_id: string }>(`SELECT event_id FROM groups_fence`);
      expect(sink.rows.map((r) => r.event_id).sort()).toEqual([...ids].sort());
      // Without a group the version does not run: it would read every partition beside the groups.
      await expect(
        PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner: "no-group" }),
      ).rejects.toThrow(/reads its partitions in 2 groups/);
    },
  );

  it(
    "a group that has not read its partitions yet holds the watermark: run one group after the other, none of the second's rows is late",
    { timeout: 60_000 },
    async () => {
      const topic = `${fx.topic}-turns`;
      await createTopic(topic, 2);
      const now = Date.now();
      const recent = await sendLedgerEvents(fx.kafka, topic, {
        prefix: "new",
        count: 200,
        partitions: [0],
        eventTime: new Date(now),
      });
      // Three days older: behind what partition 0 alone would put the watermark at (now − 48h).
      const older = await sendLedgerEvents(fx.kafka, topic, {
        prefix: "old",
        count: 200,
        partitions: [1],
        eventTime: new Date(now - 72 * 3600_000),
      });
      const spec = ledgerSpec(topic, {
        name: "groups-in-turn",
        source: { kafka: { topic, startingOffsets: "earliest", parallelism: 2 } },
        sink: { postgres: { table: "groups_in_turn" } },
      });
      const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
      const watermark = async () =>
        (
          await fx.pool.query<{ watermark: Date | null }>(
            `SELECT watermark FROM checkpoints WHERE pipeline_version_id = $1`,
            [pipelineVersionId],
          )
        ).rows[0]!.watermark;
      const run = async (group: number) =>
        drainRunner(
          await PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner: "test", group }),
        );

      const first = await run(0);
      expect(first.length).toBeGreaterThan(0);
      // Partition 1 holds 200 records no batch has read: the watermark waits for them.
      expect(await watermark()).toBeNull();
      const second = await run(1);
      const late = [...first, ...second].reduce((s, p) => s + p.outcomes.late, 0);
      expect(late).toBe(0);
      const sink = await fx.pool.query<{ event_id: string }>(`SELECT event_id FROM groups_in_turn`);
      expect(sink.rows.map((r) => r.event_id).sort()).toEqual([...recent.ids, ...older.ids].sort());
      expect((await watermark())?.getTime()).toBe(now - 72 * 3600_000 - 48 * 3600_000);
    },
  );

  it(
    "a checkpoint reset fences every group at once, and each starts again from the reset offsets",
    { timeout: 60_000 },
    async () => {
      const topic = `${fx.topic}-reset`;
      await createTopic(topic, 2);
      const sent = (await sendLedgerEvents(fx.kafka, topic, { prefix: "r", count: 200, partitions: [0, 1] }))
        .ids;
      const spec = ledgerSpec(topic, {
        name: "groups-reset",
        source: { kafka: { topic, startingOffsets: "earliest", parallelism: 2 } },
        sink: { postgres: { table: "groups_reset" } },
      });
      const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
      const open = (group: number, owner: string) =>
        PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner, group });
      await drainRunner(await open(0, "first"));
      await drainRunner(await open(1, "first"));
      const stale = await open(0, "stale");

      // Re-read partition 0 from offset 50 and partition 1 from its start, keeping state (an approved reset).
      const client = await fx.pool.connect();
      try {
        await client.query("BEGIN");
        const cp = await lockCheckpoint(client, pipelineVersionId);
        await resetCheckpoint(client, pipelineVersionId, {
          afterBatchId: cp.lastBatchId,
          offsets: { "0": 50, "1": 0 },
          owner: "change-request:test",
          clearState: false,
        });
        await client.query("COMMIT");
      } finally {
        client.release();
      }
      const more = (await sendLedgerEvents(fx.kafka, topic, { prefix: "after", count: 10, partitions: [0] }))
        .ids;
      // A group's lease taken before the reset can no longer plan or commit.
      await expect(stale.runBatch()).rejects.toThrow(FencedError);
      await stale.close();

      const again = [
        ...(await drainRunner(await open(0, "again"))),
        ...(await drainRunner(await open(1, "again"))),
      ];
      // Where each partition was read from again: its first batch after the reset.
      const starts: Record<string, number> = {};
      for (const src of again.flatMap((p) => p.sources))
        starts[src.partition] = Math.min(starts[src.partition] ?? Infinity, src.startOffset);
      expect(starts).toEqual({ "0": 50, "1": 0 });
      // Re-read rows are refused by the table (same event ids); only the new ones are stored.
      const duplicates = again.reduce((s, p) => s + p.outcomes.duplicate, 0);
      expect(duplicates).toBe(50 + 100);
      const sink = await fx.pool.query<{ event_id: string }>(`SELECT event_id FROM groups_reset`);
      expect(sink.rows.map((r) => r.event_id).sort()).toEqual([...sent, ...more].sort());
    },
  );

  it("source.kafka.partitions: a runner reads only the partitions listed", { timeout: 60_000 }, async () => {
    const topic = `${fx.topic}-only`;
    await createTopic(topic, 3);
    const wanted = [
      ...(await sendLedgerEvents(fx.kafka, topic, { prefix: "p0", count: 30, partitions: [0] })).ids,
      ...(await sendLedgerEvents(fx.kafka, topic, { prefix: "p2", count: 30, partitions: [2] })).ids,
    ];
    await sendLedgerEvents(fx.kafka, topic, { prefix: "p1", count: 30, partitions: [1] });
    const spec = ledgerSpec(topic, {
      name: "only-some",
      source: { kafka: { topic, startingOffsets: "earliest", partitions: [0, 2] } },
      sink: { postgres: { table: "only_some" } },
    });
    const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
    await drainRunner(await PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner: "test" }));
    const sink = await fx.pool.query<{ event_id: string }>(`SELECT event_id FROM only_some`);
    expect(sink.rows.map((r) => r.event_id).sort()).toEqual(wanted.sort());
    const cp = await fx.pool.query<{ end_offsets: Record<string, number> }>(
      `SELECT end_offsets FROM checkpoints WHERE pipeline_version_id = $1`,
      [pipelineVersionId],
    );
    expect(cp.rows[0]!.end_offsets).toEqual({ "0": 30, "2": 30 });
  });

  it(
    "three `sluice run --group` processes SIGKILLed together again and again: every event id exactly once, every offset once",
    { timeout: 300_000 },
    async () => {
      const topic = `${fx.topic}-kills`;
      await createTopic(topic, 6);
      const { manifest } = await producePayments({
        topic,
        kafka: fx.kafka,
        count: 45_000,
        partitions: 6,
        seed: 2203,
        duplicateShare: 0.05,
        malformedShare: 0.01,
        outOfOrderShare: 0.05,
        manifest: "ids",
        log: () => undefined,
      });
      // And events that arrive twice on partitions of different groups (p and p+1 differ mod 3).
      const crossIds = await sendAcrossPartitions(topic, "cross", 3_000, [0, 1, 2, 3, 4, 5]);
      const spec = ledgerSpec(topic, {
        name: "groups-kills",
        source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 300, parallelism: 3 } },
        sink: { postgres: { table: "groups_kills" } },
      });
      expect(validateSpec(spec).ok).toBe(true);
      const file = await specs.write("groups-kills", spec as unknown as Record<string, unknown>);
      const { kills, killedWhileOthersRan } = await killGroupsRepeatedly({
        file,
        env: { databaseUrl: fx.db.url },
        groups: 3,
        rounds: 10,
        rng: Prng.from("partition-groups-kills"),
      });

      const versionIds = await pipelineVersionIds(fx.pool, "groups-kills");
      expect(versionIds).toHaveLength(1);
      const { batches } = await auditExactlyOnce({
        pool: fx.pool,
        kafka: fx.kafka,
        topic,
        table: "groups_kills",
        versionIds,
        groups: 3,
        expectedIds: [...manifest.eventIds!, ...crossIds],
        counts: {
          messages: manifest.counts.messages + 2 * crossIds.length,
          duplicates: manifest.counts.duplicates + crossIds.length,
          malformed: manifest.counts.malformed,
        },
      });
      const replayed = batches.filter((b) => b.progress.replayed).length;
      console.log(
        `partition-groups kills: ${JSON.stringify({ kills, killedWhileOthersRan, batches: batches.length, replayed })}`,
      );
      expect(killedWhileOthersRan).toBeGreaterThan(0);
      expect(replayed).toBeGreaterThan(0);
    },
  );
});
