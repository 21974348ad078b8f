// Several outputs in partition groups (source.kafka.parallelism): each group's commit takes the
// version's row, applies its time onto what the other groups committed, and writes every output by
// that output's own watermark — windows merged into the shared state (window-operator.ts, shared).
// What must hold is what holds for one runner:
// - three `sluice run --group` processes SIGKILLed together again and again, one read split into an
//   update view and an append view (windows by card country, so one window is fed by every group,
//   each view with its own delay and lateness) and a ledger: each view equals the SQL recomputation
//   over the raw events, the ledger holds every event once, no row late;
// - a row another group's commit made late for one output only (its watermark moved between this
//   group's processing and its commit): the batch runs again, the row is late in that output and
//   still counted in the other.
import type { Admin } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prng, producePayments, simulatedClock } from "@sluice/producer";
import { validateSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import type { BatchProgress } from "../store/progress-record";
import { createEngineFixture, ledgerSpec, type EngineFixture } from "../testing/engine-fixture";
import { killGroupsRepeatedly } from "../testing/group-kills";
import { lateByAnotherGroup } from "../testing/held-commit";
import {
  expectBatchesCoverTopic,
  loadReferenceBatches,
  loadReferenceEvents,
} from "../testing/reference-events";
import { EXPECTED_MEASURES, settlementsSpec, SINK_COLUMNS } from "../testing/settlements";
import { specDir } from "../testing/sluice-process";

let fx: EngineFixture;
let admin: Admin;
let specs: Awaited<ReturnType<typeof specDir>>;

beforeAll(async () => {
  fx = await createEngineFixture("ogroups");
  admin = fx.kafka.admin();
  await admin.connect();
  specs = await specDir();
});
afterAll(async () => {
  await admin?.disconnect();
  await specs?.cleanup();
  await fx?.close();
});

const COLUMNS = SINK_COLUMNS.replace("merchant_id", "card_country");
const window5m = `to_timestamp(floor(extract(epoch FROM event_time) / 300) * 300)`;

/** Settlements per card country and 5-minute window over every distinct raw event (optionally only final ones). */
function expectedWindowsSql(events: string, where = "true"): string {
  return `SELECT * FROM (
     SELECT payload->>'card_country' AS card_country, ${window5m} AS window_start, ${window5m} + interval '5 minutes' AS window_end, ${EXPECTED_MEASURES}
       FROM (SELECT DISTINCT ON (event_id) * FROM ${events} WHERE type IN ('settlement', 'refund') ORDER BY event_id, partition, "offset") e
      GROUP BY 1, 2, 3) w
    WHERE ${where} ORDER BY window_start, card_country`;
}

/** Every output's late rows over the version's batches, and the pipeline's. */
async function lateCounts(pipelineVersionId: string): Promise<Record<string, number>> {
  const res = await fx.pool.query<{ progress: BatchProgress; late: number }>(
    `SELECT progress, (outcomes->>'late')::int AS late FROM batch_log WHERE pipeline_version_id = $1`,
    [pipelineVersionId],
  );
  const counts: Record<string, number> = { pipeline: 0 };
  for (const r of res.rows) {
    counts.pipeline! += r.late;
    for (const o of r.progress.outputs ?? []) counts[o.name] = (counts[o.name] ?? 0) + o.outcomes.late;
  }
  return counts;
}

describe("several outputs in partition groups", () => {
  it(
    "an update view, an append view and a ledger under three `sluice run --group` processes SIGKILLed together: each equals its recomputation",
    { timeout: 300_000 },
    async () => {
      const topic = `${fx.topic}-views`;
      await admin.createTopics({ topics: [{ topic, numPartitions: 6 }], waitForLeaders: true });
      // 6,000 payments keyed by merchant over a simulated 30 minutes: duplicates and reordering, nothing late.
      await producePayments({
        topic,
        kafka: fx.kafka,
        count: 6000,
        partitions: 6,
        seed: 7373,
        merchants: 12,
        clock: simulatedClock({ start: "2025-03-01T10:00:00Z", stepMs: 300 }),
        duplicateShare: 0.05,
        outOfOrderShare: 0.1,
        log: () => undefined,
      });
      const base = settlementsSpec(
        topic,
        "ogroups-views",
        "unused",
        { window: { tumbling: "5m" } },
        {
          source: {
            kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 60, parallelism: 3 },
          },
        },
      );
      const { sink: _sink, aggregate, ...shared } = base;
      const byCountry = (extra: Record<string, unknown>) => ({
        window: { tumbling: "5m" },
        groupBy: ["card_country"],
        measures: aggregate!.measures,
        ...extra,
      });
      const validated = validateSpec({
        ...shared,
        outputs: {
          fraud: {
            aggregate: byCountry({ allowedLateness: "3m" }),
            sink: { postgres: { table: "ogroups_fraud" } },
          },
          finance: {
            watermarkDelay: "4m",
            aggregate: byCountry({ outputMode: "append", allowedLateness: "1m" }),
            sink: { postgres: { table: "ogroups_finance" } },
          },
          ledger: {
            transform: { select: ["event_id", "type", "card_country", "amount", "event_time"] },
            sink: { postgres: { table: "ogroups_ledger" } },
          },
        },
      });
      if (!validated.ok) throw new Error(JSON.stringify(validated.errors));
      const file = await specs.write("ogroups-views", validated.spec as unknown as Record<string, unknown>);
      const { kills, killedWhileOthersRan } = await killGroupsRepeatedly({
        file,
        env: { databaseUrl: fx.db.url },
        groups: 3,
        rounds: 6,
        rng: Prng.from("outputs-groups-kills"),
      });

      const { rows } = await fx.pool.query<{ id: string }>(
        `SELECT v.id FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = 'ogroups-views'`,
      );
      const pipelineVersionId = rows[0]!.id;
      await loadReferenceEvents(fx.pool, fx.kafka, topic, "ref_ogroups");
      await loadReferenceBatches(fx.pool, [pipelineVersionId], "ref_ogroups_batches");
      await expectBatchesCoverTopic(fx.pool, fx.kafka, topic, "ref_ogroups_batches");

      const fraud = await fx.pool.query(
        `SELECT ${COLUMNS} FROM ogroups_fraud ORDER BY window_start, card_country`,
      );
      expect(fraud.rows.length).toBeGreaterThan(10);
      expect(fraud.rows).toEqual((await fx.pool.query(expectedWindowsSql("ref_ogroups"))).rows);

      const financeWatermark = (
        await fx.pool.query<{ watermark: string }>(
          `SELECT outputs->'finance'->>'watermark' AS watermark FROM checkpoints WHERE pipeline_version_id = $1`,
          [pipelineVersionId],
        )
      ).rows[0]!.watermark;
      const finalBy = new Date(Date.parse(financeWatermark) - 60_000).toISOString();
      const finance = await fx.pool.query(
        `SELECT ${COLUMNS} FROM ogroups_finance ORDER BY window_start, card_country`,
      );
      expect(finance.rows.length).toBeGreaterThan(10);
      expect(finance.rows.length).toBeLessThan(fraud.rows.length);
      expect(finance.rows).toEqual(
        (await fx.pool.query(expectedWindowsSql("ref_ogroups", `window_end <= '${finalBy}'`))).rows,
      );

      const ledger = await fx.pool.query<{ event_id: string }>(
        `SELECT event_id FROM ogroups_ledger ORDER BY event_id`,
      );
      const distinct = await fx.pool.query<{ event_id: string }>(
        `SELECT DISTINCT event_id FROM ref_ogroups WHERE type IN ('settlement', 'refund') ORDER BY event_id`,
      );
      expect(ledger.rows.map((r) => r.event_id)).toEqual(distinct.rows.map((r) => r.event_id));

      expect(await lateCounts(pipelineVersionId)).toEqual({ pipeline: 0, fraud: 0, finance: 0, ledger: 0 });
      console.log(
        `outputs in partition groups: ${JSON.stringify({ kills, killedWhileOthersRan, fraud: fraud.rows.length, finance: finance.rows.length, ledger: ledger.rows.length })}`,
      );
      expect(killedWhileOthersRan).toBeGreaterThan(0);
    },
  );

  it(
    "a row another group made late for one output between processing and commit: the batch runs again, late in that output, counted in the other",
    { timeout: 60_000 },
    async () => {
      const topic = `${fx.topic}-onelate`;
      await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
      const perMinute = (allowedLateness: string) => ({
        window: { tumbling: "1m" },
        groupBy: ["merchant_id"],
        measures: { events: "count()" },
        allowedLateness,
      });
      // Every event is merchant m0's: "tight" finalizes a minute as soon as the watermark passes it,
      // "patient" five minutes later.
      const spec: TPipelineSpec = ledgerSpec(topic, {
        name: "ogroups-onelate",
        source: { kafka: { topic, startingOffsets: "earliest", parallelism: 2 } },
        eventTime: { column: "event_time", watermarkDelay: "0s", idleTimeout: "1h" },
        expectations: [],
        sink: undefined,
        outputs: {
          tight: { aggregate: perMinute("0s"), sink: { postgres: { table: "ogroups_tight" } } },
          patient: { aggregate: perMinute("5m"), sink: { postgres: { table: "ogroups_patient" } } },
        },
      });
      // Group 1 moves both watermarks to 10:02 while group 0's batch with 10:00:30 waits at its commit:
      // "tight"'s 10:00 minute is final by then, "patient"'s not.
      const { pipelineVersionId, result, retries } = await lateByAnotherGroup(fx, topic, spec);
      expect(result.kind).toBe("committed");
      expect(retries.some((r) => r.includes("in output tight"))).toBe(true);
      if (result.kind !== "committed") return;
      const outcomes = Object.fromEntries(
        (result.progress.outputs ?? []).map((o) => [o.name, [o.outcomes.late, o.outcomes.sink]]),
      );
      expect(outcomes).toEqual({ tight: [1, 0], patient: [0, 1] });
      // Late for one output only: not the pipeline's late (no dead letter).
      expect(result.progress.outcomes.late).toBe(0);

      const minutes = async (table: string) =>
        (
          await fx.pool.query<{ window_start: Date; events: number }>(
            `SELECT window_start, events::int FROM ${table} ORDER BY window_start`,
          )
        ).rows.map((r) => [r.window_start.toISOString().slice(11, 16), r.events]);
      expect(await minutes("ogroups_tight")).toEqual([
        ["10:00", 1],
        ["10:02", 1],
        ["10:03", 1],
      ]);
      expect(await minutes("ogroups_patient")).toEqual([
        ["10:00", 2],
        ["10:02", 1],
        ["10:03", 1],
      ]);
      const stored = await fx.pool.query<{ outputs: Record<string, { watermark: string }> }>(
        `SELECT outputs FROM checkpoints WHERE pipeline_version_id = $1`,
        [pipelineVersionId],
      );
      expect(stored.rows[0]!.outputs.tight!.watermark).toBe("2025-03-01T10:02:00.000Z");
      expect(stored.rows[0]!.outputs.patient!.watermark).toBe("2025-03-01T10:02:00.000Z");
    },
  );
});
