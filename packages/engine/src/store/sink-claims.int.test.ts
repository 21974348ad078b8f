// A sink table's claim is enforced where rows are written, not only at registration (#19 item 5):
// against real Postgres and Kafka, a running version whose table changed hands after it registered —
// the claim given to another team's pipeline, or removed — fails its next batch with a message naming
// the owner, and writes nothing of it (sink rows, window state, batch log, checkpoint), whether a
// ledger or a windowed operator writes the table.
import { producePayments, simulatedClock } from "@sluice/producer";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../errors";
import { PipelineRunner } from "../runner/pipeline-runner";
import { createEngineFixture, ledgerSpec, type EngineFixture } from "../testing/engine-fixture";
import { settlementsSpec } from "../testing/settlements";
import { registerPipelineVersion } from "./register-version";
import { SinkClaimError } from "./sink-claims";

let fx: EngineFixture;

beforeAll(async () => {
  fx = await createEngineFixture("sink_claims_commit");
  await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: 600,
    partitions: 1,
    seed: 19,
    idPrefix: "claims",
    clock: simulatedClock({ start: "2025-03-01T10:00:00Z", stepMs: 2_000 }),
    log: () => undefined,
  });
});
afterAll(() => fx?.close());

const count = async (sql: string, params: unknown[] = []) =>
  Number((await fx.pool.query<{ n: string }>(sql, params)).rows[0]!.n);

/** What one version has committed, everywhere the commit transaction writes. */
const committed = async (pipelineVersionId: string, table: string) => ({
  sinkRows: await count(`SELECT count(*) AS n FROM "${table}"`),
  batches: await count(`SELECT count(*) AS n FROM batch_log WHERE pipeline_version_id = $1`, [
    pipelineVersionId,
  ]),
  lastBatch: await count(`SELECT last_batch_id AS n FROM checkpoints WHERE pipeline_version_id = $1`, [
    pipelineVersionId,
  ]),
  windowState: await count(`SELECT count(*) AS n FROM window_state WHERE pipeline_version_id = $1`, [
    pipelineVersionId,
  ]),
});

async function pipelineId(name: string): Promise<string> {
  return (await fx.pool.query<{ id: string }>(`SELECT id FROM pipelines WHERE name = $1`, [name])).rows[0]!
    .id;
}

/** Registers and opens `spec`, commits one batch, then hands its table's claim to `claimTo` (null: removes it). */
async function runThenLoseClaim(
  spec: TPipelineSpec,
  table: string,
  claimTo: string | null,
): Promise<{ runner: PipelineRunner; pipelineVersionId: string }> {
  const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
  const runner = await PipelineRunner.open(fx.resources, {
    pipelineVersionId,
    spec,
    owner: "test",
    readAhead: false,
  });
  expect((await runner.runBatch()).kind).toBe("committed");
  expect((await committed(pipelineVersionId, table)).batches).toBe(1);
  if (claimTo)
    await fx.pool.query(`UPDATE sink_claims SET pipeline_id = $2 WHERE table_name = $1`, [
      `public.${table}`,
      await pipelineId(claimTo),
    ]);
  else await fx.pool.query(`DELETE FROM sink_claims WHERE table_name = $1`, [`public.${table}`]);
  return { runner, pipelineVersionId };
}

describe("sink claims at commit", () => {
  beforeAll(async () => {
    // Another team's pipeline, to hand claims to.
    await registerPipelineVersion(
      fx.pool,
      ledgerSpec(fx.topic, {
        name: "risk-scores",
        owner: "risk",
        sink: { postgres: { table: "risk_scores" } },
      }),
    );
  });

  it("a ledger whose table was given to another team's pipeline after it registered fails its next batch, naming the owner, and writes nothing", async () => {
    const spec = ledgerSpec(fx.topic, {
      name: "claims-ledger",
      source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 100 } },
      sink: { postgres: { table: "claims_ledger" } },
    });
    const { runner, pipelineVersionId } = await runThenLoseClaim(spec, "claims_ledger", "risk-scores");
    const before = await committed(pipelineVersionId, "claims_ledger");
    expect(before.sinkRows).toBeGreaterThan(0);
    try {
      const err = await runner.runBatch().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SinkClaimError);
      expect(err).toBeInstanceOf(ConfigurationError); // permanent: the version stops, saying why
      expect((err as Error).message).toBe(
        "claims-ledger v1: batch not committed, nothing written: sink table public.claims_ledger belongs to pipeline risk-scores of team risk. A sink table is written only by the pipeline that claims it (sink_claims): register a version of claims-ledger writing a table of its own, or have an admin give the claim back",
      );
      expect(await committed(pipelineVersionId, "claims_ledger")).toEqual(before);
    } finally {
      await runner.close();
    }
  });

  it("a windowed pipeline whose table's claim was removed writes no window state or rows; given back, it continues", async () => {
    const spec = settlementsSpec(
      fx.topic,
      "claims-settlements",
      "claims_settlements",
      { window: { tumbling: "5m" }, outputMode: "update", allowedLateness: "3m" },
      { source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 150 } } },
    );
    const { runner, pipelineVersionId } = await runThenLoseClaim(spec, "claims_settlements", null);
    const before = await committed(pipelineVersionId, "claims_settlements");
    expect(before.windowState).toBeGreaterThan(0);
    try {
      await expect(runner.runBatch()).rejects.toThrow(
        /^claims-settlements v1: batch not committed, nothing written: sink table public\.claims_settlements is claimed by no pipeline any more\./,
      );
      expect(await committed(pipelineVersionId, "claims_settlements")).toEqual(before);
    } finally {
      await runner.close();
    }
    // The claim given back, the version started again (as the workers do): the same batch commits.
    await fx.pool.query(`INSERT INTO sink_claims (table_name, pipeline_id) VALUES ($1, $2)`, [
      "public.claims_settlements",
      await pipelineId("claims-settlements"),
    ]);
    const again = await PipelineRunner.open(fx.resources, {
      pipelineVersionId,
      spec,
      owner: "test",
      readAhead: false,
    });
    try {
      expect((await again.runBatch()).kind).toBe("committed");
    } finally {
      await again.close();
    }
    expect((await committed(pipelineVersionId, "claims_settlements")).lastBatch).toBe(before.lastBatch + 1);
  });
});
