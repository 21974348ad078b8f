// `sluice run` on a batch that kills it (out of heap, for real: sendPoisonEvents under
// --max-old-space-size=192). The CLI has no attempt limit — a person restarts it and sees each death —
// but a restarted run says, before reading, that its next batch is one an earlier run planned and never
// committed, with its offsets. With enough memory the same batch commits over the same offsets, exactly.
import type { Admin } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createEngineFixture,
  ledgerSpec,
  runSluice,
  sendLedgerEvents,
  sendPoisonEvents,
  sinkEventIds,
  specDir,
  type EngineFixture,
} from "@sluice/engine/testing";

let fx: EngineFixture;
let admin: Admin;
let specs: Awaited<ReturnType<typeof specDir>>;

beforeAll(async () => {
  fx = await createEngineFixture("run_poison");
  admin = fx.kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: fx.topic, numPartitions: 2 }], waitForLeaders: true });
  specs = await specDir();
});
afterAll(async () => {
  await admin?.disconnect();
  await specs?.cleanup();
  await fx?.close();
});

describe("sluice run on a batch that kills it", () => {
  it(
    "dies out of heap; the next run names the unfinished batch and its offsets before re-running it; with more memory it commits exactly",
    { timeout: 240_000 },
    async () => {
      const expected = new Set(await sendPoisonEvents(fx.kafka, fx.topic, { count: 30, partition: 0 }));
      for (const id of (
        await sendLedgerEvents(fx.kafka, fx.topic, { prefix: "good-p0", count: 50, partitions: [0] })
      ).ids)
        expected.add(id);
      for (const id of (
        await sendLedgerEvents(fx.kafka, fx.topic, { prefix: "good-p1", count: 80, partitions: [1] })
      ).ids)
        expected.add(id);
      const file = await specs.write(
        "poison",
        ledgerSpec(fx.topic, {
          name: "poison",
          source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 60 } },
          sink: { postgres: { table: "poison" } },
        }),
      );
      const small = { databaseUrl: fx.db.url, extra: { NODE_OPTIONS: "--max-old-space-size=192" } };

      const first = await runSluice(["run", file, "--until-caught-up"], small);
      expect(first.code).not.toBe(0);
      expect(first.stderr).toContain("JavaScript heap out of memory");
      expect(first.stderr).not.toContain("was planned at");
      const plan = await fx.pool.query(`SELECT batch_id, ranges FROM offset_log`);
      expect(plan.rows).toEqual([
        {
          batch_id: "0",
          ranges: [
            { partition: 0, from: 0, to: 30 },
            { partition: 1, from: 0, to: 30 },
          ],
        },
      ]);

      const warning =
        /^\S+: batch 0 \(partition 0 offsets 0–29, partition 1 offsets 0–29\) was planned at .* by an earlier run that did not commit it; re-running it over the same offsets/m;
      const second = await runSluice(["run", file, "--until-caught-up"], small);
      expect(second.code).not.toBe(0);
      expect(second.stderr).toContain("JavaScript heap out of memory");
      expect(second.stderr).toMatch(warning);

      const fixed = await runSluice(["run", file, "--until-caught-up"], { databaseUrl: fx.db.url });
      // The warning is all it says on stderr; stdout announces only commits.
      expect({ code: fixed.code, stderr: fixed.stderr.trim().split("\n") }).toEqual({
        code: 0,
        stderr: [expect.stringMatching(warning)],
      });
      expect(fixed.stdout).not.toContain("was planned at");
      expect((await sinkEventIds(fx.pool, "poison")).sort()).toEqual([...expected].sort());
      const batch0 = await fx.pool.query(`SELECT progress FROM batch_log WHERE batch_id = 0`);
      expect(batch0.rows[0].progress).toMatchObject({ replayed: true, inputRows: 60 });
    },
  );
});
