// Windows in partition groups (source.kafka.parallelism): the settlements grouped by card country —
// not the Kafka key (the merchant), so one window is updated from partitions of several groups at
// once — and each group's commit merges its deltas into the committed windows (window-operator.ts,
// shared). What must hold is what holds for one runner:
// - update mode under three `sluice run --group` processes SIGKILLed together again and again: every
//   window equals the SQL recomputation over the raw events, no row late, every offset read once;
// - append mode with two groups at once: each final window written once, equal to the recomputation;
// - a window another group made final between this group's processing and its commit is not updated:
//   the batch runs again and its row for that window is late.
import type { Admin } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prng, producePayments, simulatedClock } from "@sluice/producer";
import { validateSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import { PipelineRunner } from "../runner/pipeline-runner";
import { registerPipelineVersion } from "../store/register-version";
import { createEngineFixture, drainRunner, ledgerSpec, type EngineFixture } from "../testing/engine-fixture";
import {
  expectBatchesCoverTopic,
  loadReferenceBatches,
  loadReferenceEvents,
} from "../testing/reference-events";
import { EXPECTED_MEASURES, settlementsSpec, SINK_COLUMNS } from "../testing/settlements";
import { killGroupsRepeatedly } from "../testing/group-kills";
import { lateByAnotherGroup } from "../testing/held-commit";
import { specDir } from "../testing/sluice-process";

let fx: EngineFixture;
let admin: Admin;
let specs: Awaited<ReturnType<typeof specDir>>;

beforeAll(async () => {
  fx = await createEngineFixture("wgroups");
  admin = fx.kafka.admin();
  await admin.connect();
  specs = await specDir();
});
afterAll(async () => {
  await admin?.disconnect();
  await specs?.cleanup();
  await fx?.close();
});

/** 6,000 payments on 6 partitions keyed by merchant, 12 merchants over a simulated 30 minutes: duplicates and reordering, nothing late. */
async function produceSettlements(topic: string, seed: number) {
  await admin.createTopics({ topics: [{ topic, numPartitions: 6 }], waitForLeaders: true });
  await producePayments({
    topic,
    kafka: fx.kafka,
    count: 6000,
    partitions: 6,
    seed,
    merchants: 12,
    clock: simulatedClock({ start: "2025-03-01T10:00:00Z", stepMs: 300 }),
    duplicateShare: 0.05,
    outOfOrderShare: 0.1,
    log: () => undefined,
  });
}

/** Grouped by card country, not by the Kafka key (the merchant). */
const BY_COUNTRY = { groupBy: ["card_country"] };
const COLUMNS = SINK_COLUMNS.replace("merchant_id", "card_country");

/** The settlements per card country and 5-minute window, recomputed from every distinct raw event. */
function expectedWindowsSql(events: string, where = "true"): string {
  return `SELECT * FROM (
     SELECT payload->>'card_country' AS card_country, to_timestamp(floor(extract(epoch FROM event_time) / 300) * 300) AS window_start,
            to_timestamp(floor(extract(epoch FROM event_time) / 300) * 300 + 300) AS window_end, ${EXPECTED_MEASURES}
       FROM (SELECT DISTINCT ON (event_id) * FROM ${events} WHERE type IN ('settlement', 'refund') ORDER BY event_id, partition, "offset") e
      GROUP BY 1, 2, 3) w
    WHERE ${where} ORDER BY window_start, card_country`;
}

const lateRows = async (pipelineVersionId: string) =>
  Number(
    (
      await fx.pool.query<{ late: string }>(
        `SELECT coalesce(sum((outcomes->>'late')::int), 0) AS late FROM batch_log WHERE pipeline_version_id = $1`,
        [pipelineVersionId],
      )
    ).rows[0]!.late,
  );

describe("windows in partition groups", () => {
  it(
    "update mode, three `sluice run --group` processes SIGKILLed together again and again: every window equals the SQL recomputation",
    { timeout: 300_000 },
    async () => {
      const topic = `${fx.topic}-update`;
      await produceSettlements(topic, 5151);
      const spec = settlementsSpec(
        topic,
        "wgroups-update",
        "wgroups_update",
        { ...BY_COUNTRY, window: { tumbling: "5m" }, outputMode: "update", allowedLateness: "3m" },
        {
          source: {
            kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 60, parallelism: 3 },
          },
        },
      );
      expect(validateSpec(spec).ok).toBe(true);
      const file = await specs.write("wgroups-update", spec as unknown as Record<string, unknown>);
      const { kills, killedWhileOthersRan } = await killGroupsRepeatedly({
        file,
        env: { databaseUrl: fx.db.url },
        groups: 3,
        rounds: 6,
        rng: Prng.from("windowed-groups-kills"),
      });

      const { rows } = await fx.pool.query<{ id: string }>(
        `SELECT v.id FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = 'wgroups-update'`,
      );
      const pipelineVersionId = rows[0]!.id;
      await loadReferenceEvents(fx.pool, fx.kafka, topic, "ref_wgroups_update");
      await loadReferenceBatches(fx.pool, [pipelineVersionId], "ref_wgroups_update_batches");
      await expectBatchesCoverTopic(fx.pool, fx.kafka, topic, "ref_wgroups_update_batches");
      const expected = await fx.pool.query(expectedWindowsSql("ref_wgroups_update"));
      const actual = await fx.pool.query(
        `SELECT ${COLUMNS} FROM wgroups_update ORDER BY window_start, card_country`,
      );
      expect(actual.rows.length).toBeGreaterThan(10);
      expect(actual.rows).toEqual(expected.rows);
      expect(await lateRows(pipelineVersionId)).toBe(0);
      // Windows took rows from partitions of all three groups.
      const spread = await fx.pool.query<{ groups: number }>(
        `SELECT max(groups)::int AS groups FROM (
           SELECT count(DISTINCT partition % 3) AS groups FROM ref_wgroups_update WHERE type IN ('settlement', 'refund')
            GROUP BY payload->>'card_country', floor(extract(epoch FROM event_time) / 300)) x`,
      );
      console.log(
        `windowed partition groups: ${JSON.stringify({ kills, killedWhileOthersRan, windows: actual.rows.length })}`,
      );
      expect(killedWhileOthersRan).toBeGreaterThan(0);
      expect(spread.rows[0]!.groups).toBe(3);
    },
  );

  it(
    "append mode, two groups at once: each final window is written once and equals the recomputation",
    { timeout: 120_000 },
    async () => {
      const topic = `${fx.topic}-append`;
      await produceSettlements(topic, 6262);
      const spec = settlementsSpec(
        topic,
        "wgroups-append",
        "wgroups_append",
        { ...BY_COUNTRY, window: { tumbling: "5m" }, outputMode: "append", allowedLateness: "1m" },
        {
          source: {
            kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 300, parallelism: 2 },
          },
        },
      );
      const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
      const open = (group: number) =>
        PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner: `append-g${group}`, group });
      await Promise.all([drainRunner(await open(0)), drainRunner(await open(1))]);

      const watermark = (
        await fx.pool.query<{ watermark: Date }>(
          `SELECT watermark FROM checkpoints WHERE pipeline_version_id = $1`,
          [pipelineVersionId],
        )
      ).rows[0]!.watermark;
      const finalBy = new Date(watermark.getTime() - 60_000).toISOString();
      await loadReferenceEvents(fx.pool, fx.kafka, topic, "ref_wgroups_append");
      const expected = await fx.pool.query(
        expectedWindowsSql("ref_wgroups_append", `window_end <= '${finalBy}'`),
      );
      const actual = await fx.pool.query(
        `SELECT ${COLUMNS} FROM wgroups_append ORDER BY window_start, card_country`,
      );
      expect(actual.rows.length).toBeGreaterThan(10);
      expect(actual.rows).toEqual(expected.rows);
      expect(await lateRows(pipelineVersionId)).toBe(0);
    },
  );

  it(
    "new versions with another parallelism (3 groups, then 2, then one runner) continue the windows and offsets: the result equals the recomputation",
    { timeout: 180_000 },
    async () => {
      const topic = `${fx.topic}-regroup`;
      await produceSettlements(topic, 7171);
      const specWith = (parallelism?: number) =>
        settlementsSpec(
          topic,
          "wgroups-regroup",
          "wgroups_regroup",
          { ...BY_COUNTRY, window: { tumbling: "5m" }, outputMode: "update", allowedLateness: "3m" },
          {
            source: {
              kafka: {
                topic,
                startingOffsets: "earliest",
                maxOffsetsPerTrigger: 300,
                ...(parallelism ? { parallelism } : {}),
              },
            },
          },
        );
      // Each grouped version runs two batches in every group, all groups at once, and stops there.
      const runGroups = async (pipelineVersionId: string, groups: number) => {
        const spec = specWith(groups);
        const runners = await Promise.all(
          Array.from({ length: groups }, (_, group) =>
            PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner: `regroup-g${group}`, group }),
          ),
        );
        for (let round = 0; round < 2; round++)
          for (const r of await Promise.all(runners.map((runner) => runner.runBatch())))
            expect(r.kind).toBe("committed");
        await Promise.all(runners.map((r) => r.close()));
      };
      const v1 = await registerPipelineVersion(fx.pool, specWith(3));
      await runGroups(v1.pipelineVersionId, 3);
      const v2 = await registerPipelineVersion(fx.pool, specWith(2));
      expect(v2.continuedFrom?.pipelineVersionId).toBe(v1.pipelineVersionId);
      await runGroups(v2.pipelineVersionId, 2);
      const v3 = await registerPipelineVersion(fx.pool, specWith());
      expect(v3.continuedFrom?.pipelineVersionId).toBe(v2.pipelineVersionId);
      await drainRunner(
        await PipelineRunner.open(fx.resources, {
          pipelineVersionId: v3.pipelineVersionId,
          spec: specWith(),
          owner: "regroup-one",
        }),
      );

      const versions = [v1, v2, v3].map((v) => v.pipelineVersionId);
      await loadReferenceEvents(fx.pool, fx.kafka, topic, "ref_wgroups_regroup");
      await loadReferenceBatches(fx.pool, versions, "ref_wgroups_regroup_batches");
      await expectBatchesCoverTopic(fx.pool, fx.kafka, topic, "ref_wgroups_regroup_batches");
      const expected = await fx.pool.query(expectedWindowsSql("ref_wgroups_regroup"));
      const actual = await fx.pool.query(
        `SELECT ${COLUMNS} FROM wgroups_regroup ORDER BY window_start, card_country`,
      );
      expect(actual.rows.length).toBeGreaterThan(10);
      expect(actual.rows).toEqual(expected.rows);
      // Every version committed part of the topic, and nothing was late in any.
      for (const v of versions) {
        const read = await fx.pool.query<{ rows: number }>(
          `SELECT coalesce(sum(input_rows), 0)::int AS rows FROM batch_log WHERE pipeline_version_id = $1`,
          [v],
        );
        expect(read.rows[0]!.rows).toBeGreaterThan(0);
        expect(await lateRows(v)).toBe(0);
      }
    },
  );

  it(
    "a window another group made final between this group's processing and its commit: the batch runs again and its row is late",
    { timeout: 60_000 },
    async () => {
      const topic = `${fx.topic}-final`;
      await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
      const spec: TPipelineSpec = ledgerSpec(topic, {
        name: "wgroups-final",
        source: { kafka: { topic, startingOffsets: "earliest", parallelism: 2 } },
        eventTime: { column: "event_time", watermarkDelay: "0s", idleTimeout: "1h" },
        expectations: [],
        aggregate: {
          window: { tumbling: "1m" },
          groupBy: ["merchant_id"],
          measures: { events: "count()" },
          outputMode: "update",
        },
        sink: { postgres: { table: "wgroups_final" } },
      });
      // Group 1 moves the watermark to 10:02 while group 0's batch with 10:00:30 waits at its commit:
      // window 10:00–10:01 is final by then.
      const { pipelineVersionId, result, retries } = await lateByAnotherGroup(fx, topic, spec);
      expect(result.kind).toBe("committed");
      expect(retries.some((r) => r.includes("late by the watermark another partition group committed"))).toBe(
        true,
      );
      if (result.kind === "committed") expect(result.progress.outcomes.late).toBe(1);
      const late = await fx.pool.query<{ partition: number; payload: { event_id: string } }>(
        `SELECT partition, payload FROM dead_letters WHERE pipeline_version_id = $1 AND outcome = 'late'`,
        [pipelineVersionId],
      );
      expect(late.rows.map((r) => [r.partition, r.payload.event_id])).toEqual([[0, "c-00000"]]);
      // Window 10:00 holds only group 1's row, as written when it became final.
      const windows = await fx.pool.query<{ window_start: Date; events: number }>(
        `SELECT window_start, events::int FROM wgroups_final ORDER BY window_start`,
      );
      expect(windows.rows.map((r) => [r.window_start.toISOString(), r.events])).toEqual([
        ["2025-03-01T10:00:00.000Z", 1],
        ["2025-03-01T10:02:00.000Z", 1],
        ["2025-03-01T10:03:00.000Z", 1],
      ]);
    },
  );
});
