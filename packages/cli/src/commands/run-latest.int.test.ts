// `startingOffsets: latest` under `sluice run`, against real Kafka and Postgres: the version's first
// start records the topic's end offsets in its checkpoint, and from there every record is read exactly
// once — what arrives before its first batch (a restart does not skip it), while it runs, while it is
// down, and on a partition added to the topic later (read from its beginning) — and nothing from before.
import type { Admin } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createEngineFixture,
  ledgerSpec,
  runSluice,
  sendLedgerEvents,
  sinkEventIds,
  spawnSluice,
  specDir,
  type EngineFixture,
} from "@sluice/engine/testing";
import { waitFor } from "@sluice/testing";

let fx: EngineFixture;
let admin: Admin;
let specs: Awaited<ReturnType<typeof specDir>>;

beforeAll(async () => {
  fx = await createEngineFixture("run_latest");
  admin = fx.kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: fx.topic, numPartitions: 3 }], waitForLeaders: true });
  specs = await specDir();
});
afterAll(async () => {
  await admin?.disconnect();
  await specs?.cleanup();
  await fx?.close();
});

const topicEnds = async () =>
  Object.fromEntries(
    (await admin.fetchTopicOffsets(fx.topic)).map((o) => [String(o.partition), Number(o.high)]),
  );
const sorted = (ids: Iterable<string>) => [...ids].sort();

describe("sluice run with startingOffsets: latest", () => {
  it("reads every record after the first start exactly once — before the first batch, while running, while down, on a new partition — and none from before", async () => {
    await sendLedgerEvents(fx.kafka, fx.topic, { prefix: "before-start", count: 60, partitions: [0, 1, 2] });
    const spec = ledgerSpec(fx.topic, {
      name: "from-now",
      source: { kafka: { topic: fx.topic, startingOffsets: "latest", maxOffsetsPerTrigger: 50 } },
      sink: { postgres: { table: "from_now" } },
      trigger: { every: "200ms" },
    });
    const file = await specs.write("from-now", spec);
    const env = { databaseUrl: fx.db.url };

    // 1. The first start records "now" in the checkpoint; there is nothing to read yet.
    const first = await runSluice(["run", file, "--once"], env);
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: "" });
    expect(first.stdout).toContain("caught up");
    const start = await topicEnds();
    const cp = await fx.pool.query(`SELECT last_batch_id, end_offsets FROM checkpoints`);
    expect(cp.rows).toEqual([{ last_batch_id: "-1", end_offsets: start }]);

    // 2. Sent before the first batch: a restart must still read it (not start at the new end).
    const beforeFirstBatch = await sendLedgerEvents(fx.kafka, fx.topic, {
      prefix: "before-first-batch",
      count: 60,
      partitions: [0, 1, 2],
    });
    const expected = new Set(beforeFirstBatch.ids);
    const running = spawnSluice(["run", file], env);
    try {
      await waitFor(
        "the records sent before the first batch in the sink",
        async () => (await sinkEventIds(fx.pool, "from_now")).length >= expected.size,
        60_000,
        250,
      );

      // 3. While it runs: into the existing partitions, then into a partition added to the topic.
      const whileRunning = await sendLedgerEvents(fx.kafka, fx.topic, {
        prefix: "while-running",
        count: 30,
        partitions: [0, 1, 2],
      });
      await admin.createPartitions({ topicPartitions: [{ topic: fx.topic, count: 4 }] });
      const newPartition = await sendLedgerEvents(fx.kafka, fx.topic, {
        prefix: "new-partition",
        count: 30,
        partitions: [3, 0],
      });
      for (const id of [...whileRunning.ids, ...newPartition.ids]) expected.add(id);
      await waitFor(
        "the new partition's records in the sink",
        async () => (await sinkEventIds(fx.pool, "from_now")).length >= expected.size,
        90_000,
        250,
      );
    } finally {
      running.child.kill("SIGTERM");
    }
    expect((await running.exited).code).toBe(0);

    // 4. While it is down; then one run to the end.
    const whileDown = await sendLedgerEvents(fx.kafka, fx.topic, {
      prefix: "while-down",
      count: 40,
      partitions: [0, 1, 2, 3],
    });
    for (const id of whileDown.ids) expected.add(id);
    const last = await runSluice(["run", file, "--until-caught-up"], env);
    expect({ code: last.code, stderr: last.stderr.slice(-2000) }).toEqual({ code: 0, stderr: "" });

    expect(sorted(await sinkEventIds(fx.pool, "from_now"))).toEqual(sorted(expected));
    // The committed batches tile the topic from the recorded start (partition 3 from its beginning) to its end.
    const batches = await fx.pool.query<{
      progress: { sources: { partition: number; startOffset: number; endOffset: number }[] };
    }>(`SELECT progress FROM batch_log ORDER BY batch_id`);
    const next = new Map(Object.entries(start).map(([p, o]) => [Number(p), o]));
    for (const b of batches.rows) {
      for (const s of b.progress.sources) {
        expect({ partition: s.partition, start: s.startOffset }).toEqual({
          partition: s.partition,
          start: next.get(s.partition) ?? 0,
        });
        next.set(s.partition, s.endOffset);
      }
    }
    expect(Object.fromEntries([...next].map(([p, o]) => [String(p), o]))).toEqual(await topicEnds());
  });
});
