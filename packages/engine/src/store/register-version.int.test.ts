// A new version continues its previous version's state only when it would have built the same state
// (docs/engine.md, "A new version"), on real Kafka and Postgres:
// - v1 (5-minute windows) runs a few batches; v2 with 10-minute windows is refused with the reason,
//   through the library and through `sluice validate --against-registered` / `sluice run`, and nothing
//   changes: no version 2, version 1 not fenced and still committing;
// - v2 that only adds an expectation continues, and its table equals an uninterrupted run's;
// - fresh state: a version of its own physical table (the table's name, a view, follows the serving
//   version), never the previous version's; or beside it with a new table;
// - a rollback to a superseded version's spec is a new version continuing the latest state; the
//   superseded version can never take the lease again (its checkpoint is stale).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { producePayments, simulatedClock } from "@sluice/producer";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { PipelineRunner } from "../runner/pipeline-runner";
import { KafkaSource } from "../source/kafka-source";
import {
  createEngineFixture,
  drainPipeline,
  ledgerSpec,
  pipelineVersionIds,
  sinkEventIds,
  type EngineFixture,
} from "../testing/engine-fixture";
import { runSluice, specDir } from "../testing/sluice-process";
import { registerPipelineVersion } from "./register-version";
import { SupersededError } from "../errors";
import { IncompatibleStateError } from "./version-compatibility";

let fx: EngineFixture;
let specs: Awaited<ReturnType<typeof specDir>>;

function settlements(
  name: string,
  table: string,
  overrides: { window?: string; expectations?: unknown[] } = {},
): TPipelineSpec {
  return ledgerSpec(fx.topic, {
    name,
    source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 400 } },
    eventTime: { column: "event_time", watermarkDelay: "2m", idleTimeout: "1h" },
    expectations: overrides.expectations ?? [],
    transform: { filter: "type in ['settlement', 'refund']" },
    aggregate: {
      window: { tumbling: overrides.window ?? "5m" },
      groupBy: ["merchant_id"],
      measures: { settled: "sum(amount)", events: "count()" },
      outputMode: "update",
      allowedLateness: "1m",
    },
    sink: { postgres: { table } },
  });
}

async function runBatches(spec: TPipelineSpec, pipelineVersionId: string, n: number): Promise<void> {
  const runner = await PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner: "test" });
  try {
    for (let i = 0; i < n; i++) await runner.runBatch();
  } finally {
    await runner.close();
  }
}

const leaseOwner = async (pv: string) =>
  (
    await fx.pool.query<{ lease_owner: string | null }>(
      `SELECT lease_owner FROM checkpoints WHERE pipeline_version_id = $1`,
      [pv],
    )
  ).rows[0]?.lease_owner;
const tableRows = async (table: string) =>
  (
    await fx.pool.query(
      `SELECT merchant_id, window_start, settled::text, events::int FROM ${table} ORDER BY window_start, merchant_id`,
    )
  ).rows;

beforeAll(async () => {
  fx = await createEngineFixture("versions");
  specs = await specDir();
  await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: 3000,
    partitions: 2,
    seed: 77,
    merchants: 6,
    clock: simulatedClock({ start: "2025-04-01T08:00:00Z", stepMs: 500 }),
    duplicateShare: 0.03,
    outOfOrderShare: 0.1,
    log: () => undefined,
  });
});
afterAll(async () => {
  await specs?.cleanup();
  await fx?.close();
});

describe("a new version and its previous version's state", () => {
  it("a changed window size is refused with the reason, by the library and the CLI, and changes nothing", async () => {
    const v1Spec = settlements("settlements", "settlements_5m");
    const v1 = await registerPipelineVersion(fx.pool, v1Spec);
    await runBatches(v1Spec, v1.pipelineVersionId, 3);

    const v2Spec = settlements("settlements", "settlements_5m", { window: "10m" });
    const refused = await registerPipelineVersion(fx.pool, v2Spec).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(IncompatibleStateError);
    const message = (refused as IncompatibleStateError).message;
    expect(message).toContain(
      "settlements: the new version cannot continue version 1's state, so nothing was registered:",
    );
    expect(message).toContain("window state: aggregate.window.tumbling changed from 5m to 10m");
    expect(message).toContain("--fresh-state");
    expect((refused as IncompatibleStateError).compatibility.states).toContainEqual({
      state: "window",
      continues: false,
    });

    const file = await specs.write("settlements-10m", v2Spec as unknown as Record<string, unknown>);
    const validated = await runSluice(["validate", file, "--against-registered"], { databaseUrl: fx.db.url });
    expect(validated.code).toBe(1);
    expect(validated.stderr).toContain(
      "a new version cannot continue version 1's state:\n  - window state: aggregate.window.tumbling changed from 5m to 10m",
    );
    const run = await runSluice(["run", file, "--once"], { databaseUrl: fx.db.url });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "window state: aggregate.window.tumbling changed from 5m to 10m: the stored state holds tumbling 5m windows",
    );

    // Nothing was registered or fenced: version 1 is the only version, and it still commits.
    expect(await pipelineVersionIds(fx.pool, "settlements")).toEqual([v1.pipelineVersionId]);
    expect(await leaseOwner(v1.pipelineVersionId)).toBe("test");
    await runBatches(v1Spec, v1.pipelineVersionId, 1);
  });

  it("a version that only adds an expectation continues the open windows: its table equals an uninterrupted run's", async () => {
    const [v1] = await pipelineVersionIds(fx.pool, "settlements");
    const openWindows = await fx.pool.query(
      `SELECT count(*)::int AS n FROM window_state WHERE pipeline_version_id = $1`,
      [v1],
    );
    expect(openWindows.rows[0].n).toBeGreaterThan(0);

    const v2Spec = settlements("settlements", "settlements_5m", {
      expectations: [{ name: "known_currency", expr: "currency in ['USD', 'EUR', 'GBP']", action: "warn" }],
    });
    const file = await specs.write("settlements-v2", v2Spec as unknown as Record<string, unknown>);
    const validated = await runSluice(["validate", file, "--against-registered"], { databaseUrl: fx.db.url });
    expect(validated).toMatchObject({ code: 0 });
    expect(validated.stdout).toContain("a new version would continue version 1's state");

    const v2 = await registerPipelineVersion(fx.pool, v2Spec);
    expect(v2.continuedFrom?.pipelineVersionId).toBe(v1);
    expect(await leaseOwner(v1!)).toBe("superseded");
    const carried = await fx.pool.query(
      `SELECT count(*)::int AS n FROM window_state WHERE pipeline_version_id = $1`,
      [v2.pipelineVersionId],
    );
    expect(carried.rows[0].n).toBe(openWindows.rows[0].n);
    await drainPipeline(fx, v2Spec);

    await drainPipeline(fx, settlements("settlements-reference", "settlements_reference"));
    const continued = await tableRows("settlements_5m");
    expect(continued.length).toBeGreaterThan(10);
    expect(continued).toEqual(await tableRows("settlements_reference"));
  });

  it("a version without dedupe continues the checkpoint but not the dedup keys, and its state size leaves them out", async () => {
    const ledger = (dedupe: boolean) =>
      ledgerSpec(fx.topic, {
        name: "ledger-undeduped",
        source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 400 } },
        // Upsert: an append table keyed by event id keeps the keys itself and no dedup state (batch/dedup.ts).
        sink: { postgres: { table: "ledger_undeduped", key: ["event_id"], mode: "upsert" } },
        ...(dedupe ? {} : { dedupe: undefined }),
      });
    const v1 = await registerPipelineVersion(fx.pool, ledger(true));
    await runBatches(ledger(true), v1.pipelineVersionId, 2);
    const v2 = await registerPipelineVersion(fx.pool, ledger(false));
    expect(v2.continuedFrom?.pipelineVersionId).toBe(v1.pipelineVersionId);
    const state = await fx.pool.query(
      `SELECT c.last_batch_id::int, c.state_rows::int, (SELECT count(*)::int FROM dedup_state d WHERE d.pipeline_version_id = c.pipeline_version_id) AS keys
         FROM checkpoints c WHERE c.pipeline_version_id = ANY($1) ORDER BY c.last_batch_id DESC, c.state_rows DESC`,
      [[v1.pipelineVersionId, v2.pipelineVersionId]],
    );
    const [was, now] = state.rows;
    expect(was.keys).toBeGreaterThan(0);
    expect(was.state_rows).toBe(was.keys);
    expect(now).toEqual({ last_batch_id: was.last_batch_id, state_rows: 0, keys: 0 });
  });

  it("a ledger whose table kept its dedup keys hands them to a version with outputs, which refuses duplicates of its events in a new table", async () => {
    const table = "ledger_handover";
    const ledger = ledgerSpec(fx.topic, {
      name: "ledger-handover",
      source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 400 } },
      eventTime: { column: "event_time", watermarkDelay: "5m" },
      sink: { postgres: { table } },
    });
    // The same table as an output, and a new one beside it: outputs share one dedup state, which the
    // new table depends on entirely.
    const split = ledgerSpec(fx.topic, {
      ...ledger,
      sink: undefined,
      outputs: {
        main: { sink: { postgres: { table } } },
        extra: { sink: { postgres: { table: "ledger_handover_extra" } } },
      },
    });
    const v1 = await registerPipelineVersion(fx.pool, ledger);
    await runBatches(ledger, v1.pipelineVersionId, 2);
    const before = await sinkEventIds(fx.pool, table);
    const v1State = await fx.pool.query<{
      keys: number;
      watermark: Date;
      end_offsets: Record<string, number>;
    }>(
      `SELECT (SELECT count(*)::int FROM dedup_state WHERE pipeline_version_id = $1) AS keys, watermark, end_offsets
         FROM checkpoints WHERE pipeline_version_id = $1`,
      [v1.pipelineVersionId],
    );
    const { keys: v1Keys, watermark, end_offsets: boundary } = v1State.rows[0]!;
    expect(v1Keys).toBe(0);

    const v2 = await registerPipelineVersion(fx.pool, split);
    expect(v2.continuedFrom?.pipelineVersionId).toBe(v1.pipelineVersionId);
    // Handed: exactly the keys the table holds from v1's dedup horizon (its watermark) on, counted in
    // the state size as the engine counts dedup keys.
    const expected = await fx.pool.query<{ event_id: string }>(
      `SELECT event_id FROM "${table}" WHERE event_time >= $1`,
      [watermark],
    );
    const kept = new Set(expected.rows.map((r) => r.event_id));
    expect(kept.size).toBeGreaterThan(0);
    expect(kept.size).toBeLessThan(before.length);
    const handed = await fx.pool.query<{ key: string }>(
      `SELECT key FROM dedup_state WHERE pipeline_version_id = $1`,
      [v2.pipelineVersionId],
    );
    expect(handed.rows.map((r) => r.key).sort()).toEqual([...kept].sort());
    const size = await fx.pool.query<{ state_rows: number; state_bytes: number; bytes: number }>(
      `SELECT state_rows::int, state_bytes::int,
              (SELECT sum(octet_length(key) + 8)::int FROM dedup_state WHERE pipeline_version_id = $1) AS bytes
         FROM checkpoints WHERE pipeline_version_id = $1`,
      [v2.pipelineVersionId],
    );
    expect(size.rows[0]).toEqual({
      state_rows: kept.size,
      state_bytes: size.rows[0]!.bytes,
      bytes: size.rows[0]!.bytes,
    });

    // The stream after v1's checkpoint repeats some of those events: the test means something only then.
    const source = new KafkaSource({ kafka: fx.kafka, topic: fx.topic, groupPrefix: "handover-check" });
    const after = await source.read(
      (await source.partitionOffsets()).map((p) => ({
        partition: p.partition,
        from: Number(boundary[String(p.partition)] ?? 0),
        to: p.high,
      })),
    );
    await source.close();
    const repeated = after
      .map((r) => (JSON.parse(r.value?.toString() ?? "{}") as { event_id?: string }).event_id)
      .filter((id): id is string => id !== undefined && kept.has(id));
    expect(repeated.length).toBeGreaterThan(0);

    await drainPipeline(fx, split);
    // The new table holds exactly the events v2 stored in the old one for the first time: no repeat of
    // an event v1 had stored got in through the table that never saw it.
    const extra = await sinkEventIds(fx.pool, "ledger_handover_extra");
    const added = (await sinkEventIds(fx.pool, table)).filter((id) => !before.includes(id));
    expect(extra.length).toBeGreaterThan(0);
    expect([...extra].sort()).toEqual([...added].sort());
  });

  it("fresh state: a version of its own table, never the previous version's; readers of the table's name see the serving version's", async () => {
    const [, v2] = await pipelineVersionIds(fx.pool, "settlements");
    const v2Windows = await tableRows("settlements_5m");
    expect(v2Windows.length).toBeGreaterThan(0);
    const physical = async (pv: string) =>
      (
        await fx.pool.query<{ sink_tables: Record<string, string> }>(
          `SELECT sink_tables FROM pipeline_versions WHERE id = $1`,
          [pv],
        )
      ).rows[0]!.sink_tables;
    // Version 2 continued version 1 in place: it writes the table version 1 created.
    expect(await physical(v2!)).toEqual({ "public.settlements_5m": "settlements_5m@v1" });

    const sameTable = settlements("settlements", "settlements_5m", { window: "10m" });
    const v3 = await registerPipelineVersion(fx.pool, sameTable, { continueFromPrevious: false });
    expect(v3).toMatchObject({ version: 3, created: true, replaced: { version: 2 } });
    expect(await physical(v3.pipelineVersionId)).toEqual({ "public.settlements_5m": "settlements_5m@v3" });
    // Readers of settlements_5m now see version 3's results (none yet); version 2's stay in its table.
    expect(await tableRows("settlements_5m")).toEqual([]);
    expect(await tableRows(`sluice_sinks."settlements_5m@v1"`)).toEqual(v2Windows);
    const serving = await fx.pool.query(
      `SELECT serving_version_id FROM pipelines WHERE name = 'settlements'`,
    );
    expect(serving.rows[0]).toEqual({ serving_version_id: v3.pipelineVersionId });
    await drainPipeline(fx, sameTable);
    expect((await tableRows("settlements_5m")).length).toBeGreaterThan(0);
    expect(await tableRows(`sluice_sinks."settlements_5m@v1"`)).toEqual(v2Windows);

    const beside = settlements("settlements", "settlements_10m", { window: "10m" });
    const v4 = await registerPipelineVersion(fx.pool, beside, { continueFromPrevious: false });
    expect(v4).toMatchObject({ version: 4, created: true });
    expect(v4.continuedFrom).toBeUndefined();
    expect(v4.replaced).toBeUndefined();
    const cp = await fx.pool.query(
      `SELECT last_batch_id::int, state_rows::int FROM checkpoints WHERE pipeline_version_id = $1`,
      [v4.pipelineVersionId],
    );
    expect(cp.rows[0]).toEqual({ last_batch_id: -1, state_rows: 0 });
    const { progress } = await drainPipeline(fx, beside);
    expect(progress[0]!.sources.every((s) => s.startOffset === 0)).toBe(true);
  });
  it("a rollback: the spec of a superseded version makes a new version continuing the latest state; the old version never runs again", async () => {
    const v1Spec = settlements("rollback", "settlements_rollback");
    const v1 = await registerPipelineVersion(fx.pool, v1Spec);
    await runBatches(v1Spec, v1.pipelineVersionId, 2);
    const v2Spec = settlements("rollback", "settlements_rollback", {
      expectations: [{ name: "known_currency", expr: "currency in ['USD', 'EUR', 'GBP']", action: "warn" }],
    });
    const v2 = await registerPipelineVersion(fx.pool, v2Spec);
    await runBatches(v2Spec, v2.pipelineVersionId, 2);

    // Back to v1's spec: not v1 again (its checkpoint is two batches behind and its windows stale) but v3.
    const v3 = await registerPipelineVersion(fx.pool, v1Spec);
    expect(v3).toMatchObject({
      version: 3,
      created: true,
      continuedFrom: { pipelineVersionId: v2.pipelineVersionId, version: 2 },
    });
    const reopened = await PipelineRunner.open(fx.resources, {
      pipelineVersionId: v1.pipelineVersionId,
      spec: v1Spec,
      owner: "stale",
    }).catch((err: unknown) => err);
    expect(reopened).toBeInstanceOf(SupersededError);
    expect((reopened as Error).message).toContain("pipeline version 1 was superseded by version 2");
    // The same spec again maps to v3 (live): `sluice run` resumes it.
    const file = await specs.write("rollback-v1", v1Spec as unknown as Record<string, unknown>);
    const run = await runSluice(["run", file, "--until-caught-up"], { databaseUrl: fx.db.url });
    expect(run.code).toBe(0);
    expect(await pipelineVersionIds(fx.pool, "rollback")).toEqual([
      v1.pipelineVersionId,
      v2.pipelineVersionId,
      v3.pipelineVersionId,
    ]);

    // Nothing counted twice: the windows equal an uninterrupted run's.
    await drainPipeline(fx, settlements("rollback-reference", "rollback_reference"));
    const rolledBack = await tableRows("settlements_rollback");
    expect(rolledBack.length).toBeGreaterThan(10);
    expect(rolledBack).toEqual(await tableRows("rollback_reference"));
  });
});
