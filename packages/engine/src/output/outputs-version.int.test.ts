// A new version of a pipeline with outputs decides its state per output (issue #23): a one-sink
// settlements pipeline split into a fraud view (writing the same table) and a new finance output
// continues its windows in the fraud output — whose table then equals an uninterrupted one-sink run's —
// while finance starts empty at the offsets of the switch; the per-output state sizes add up.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { producePayments } from "@sluice/producer";
import { PipelineRunner } from "../runner/pipeline-runner";
import { registerPipelineVersion } from "../store/register-version";
import {
  createEngineFixture,
  drainPipeline,
  drainRunner,
  type EngineFixture,
} from "../testing/engine-fixture";
import {
  settlementsSpec,
  settlementsWorkload,
  settlementViewsSpec,
  SINK_COLUMNS,
} from "../testing/settlements";

let fx: EngineFixture;
const FRAUD = { delay: 2, lateness: 1 };

beforeAll(async () => {
  fx = await createEngineFixture("outputs-version");
  await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    ...settlementsWorkload(99),
    log: () => undefined,
  });
});
afterAll(() => fx?.close());

const oneSink = (name: string, table: string) =>
  settlementsSpec(
    fx.topic,
    name,
    table,
    { window: { tumbling: "5m" }, allowedLateness: `${FRAUD.lateness}m` },
    {
      source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 500 } },
      eventTime: { column: "event_time", watermarkDelay: `${FRAUD.delay}m`, idleTimeout: "1h" },
    },
  );

describe("splitting a one-sink pipeline into outputs", () => {
  it(
    "continues the sink's windows in the output writing its table; the new output starts empty",
    { timeout: 180_000 },
    async () => {
      await drainPipeline(fx, oneSink("fraud-uninterrupted", "fraud_whole"));

      const v1 = oneSink("fraud-split", "fraud_split");
      const first = await registerPipelineVersion(fx.pool, v1);
      const runner = await PipelineRunner.open(fx.resources, {
        pipelineVersionId: first.pipelineVersionId,
        spec: v1,
        owner: "v1",
      });
      try {
        for (let i = 0; i < 5; i++) await runner.runBatch();
      } finally {
        await runner.close();
      }
      const switchedAt = await fx.pool.query(
        `SELECT end_offsets FROM checkpoints WHERE pipeline_version_id = $1`,
        [first.pipelineVersionId],
      );

      const v2 = settlementViewsSpec(fx.topic, "fraud-split", {
        fraudTable: "fraud_split",
        financeTable: "finance_split",
        fraud: FRAUD,
        finance: { delay: 3, lateness: 4 },
      });
      const second = await registerPipelineVersion(fx.pool, v2);
      expect(second.continuedFrom?.pipelineVersionId).toBe(first.pipelineVersionId);
      expect(second.notes?.map((n) => n.path)).toEqual(["outputs.finance"]);
      const carried = await fx.pool.query(
        `SELECT output, count(*)::int AS n FROM window_state WHERE pipeline_version_id = $1 GROUP BY 1`,
        [second.pipelineVersionId],
      );
      expect(carried.rows.map((r) => r.output)).toEqual(["fraud"]);
      const progress = await drainRunner(
        await PipelineRunner.open(fx.resources, {
          pipelineVersionId: second.pipelineVersionId,
          spec: v2,
          owner: "v2",
        }),
      );

      const rows = async (table: string) =>
        (await fx.pool.query(`SELECT ${SINK_COLUMNS} FROM ${table} ORDER BY window_start, merchant_id`)).rows;
      expect((await rows("fraud_split")).length).toBeGreaterThan(50);
      expect(await rows("fraud_split")).toEqual(await rows("fraud_whole"));

      // Finance read only what came after the switch: its first batch started at v1's end offsets.
      const firstFinance = progress[0]!;
      expect(
        Object.fromEntries(firstFinance.sources.map((s) => [String(s.partition), s.startOffset])),
      ).toEqual(switchedAt.rows[0]!.end_offsets);
      const state = await fx.pool.query(
        `SELECT output, count(*)::int AS n FROM window_state WHERE pipeline_version_id = $1 GROUP BY 1 ORDER BY 1`,
        [second.pipelineVersionId],
      );
      const last = progress.at(-1)!;
      expect(state.rows.map((r) => [r.output, r.n])).toEqual(
        last.outputs!.filter((o) => o.stateRows > 0).map((o) => [o.name, o.stateRows]),
      );
    },
  );
});
