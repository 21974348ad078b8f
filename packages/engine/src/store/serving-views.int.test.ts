// Sinks apart from the control plane, and an explicit serving version (issues 19 item 5 and 20), on
// real Postgres and Kafka:
// - a version writes its physical table in sluice_sinks; readers query the spec's name, a view over it;
// - the migration moves an install's existing sink tables there (rows, key and all) and leaves a view
//   of the same name, and the pipeline keeps running on the moved table; it names tables by the same
//   rule as physicalSinkTable, long names included;
// - a spec may not name the sinks schema.
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { producePayments, simulatedClock } from "@sluice/producer";
import {
  createEngineFixture,
  drainPipeline,
  ledgerSpec,
  type EngineFixture,
} from "../testing/engine-fixture";
import { physicalSinkTable } from "./physical-sink-table";
import { registerPipelineVersion } from "./register-version";
import { SinkClaimError } from "./sink-claims";

const MIGRATION = fileURLToPath(
  new URL("../../../../prisma/migrations/20261202090000_serving_views/migration.sql", import.meta.url),
);

let fx: EngineFixture;
beforeAll(async () => {
  fx = await createEngineFixture("serving");
  await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: 600,
    partitions: 2,
    seed: 5,
    merchants: 4,
    clock: simulatedClock({ start: "2025-04-01T08:00:00Z", stepMs: 500 }),
    duplicateShare: 0,
    outOfOrderShare: 0,
    log: () => undefined,
  });
});
afterAll(async () => {
  await fx?.close();
});

const relkind = async (schema: string, name: string) =>
  (
    await fx.pool.query<{ relkind: string }>(
      `SELECT c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
      [schema, name],
    )
  ).rows[0]?.relkind;
const count = async (from: string) =>
  Number((await fx.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${from}`)).rows[0]!.n);

describe("physical sink tables and serving views", () => {
  it("a version writes its own table in sluice_sinks; the spec's name is a view over it that readers query", async () => {
    const spec = ledgerSpec(fx.topic, { name: "served", sink: { postgres: { table: "served_ledger" } } });
    const { pipelineVersionId } = await drainPipeline(fx, spec);
    expect(await relkind("sluice_sinks", "served_ledger@v1")).toBe("r");
    expect(await relkind("public", "served_ledger")).toBe("v");
    const rows = await count(`sluice_sinks."served_ledger@v1"`);
    expect(rows).toBeGreaterThan(100);
    expect(await count("served_ledger")).toBe(rows);
    const p = await fx.pool.query(`SELECT serving_version_id FROM pipelines WHERE name = 'served'`);
    expect(p.rows[0]).toEqual({ serving_version_id: pipelineVersionId });
  });

  it("the migration moves an existing install's sink table into sluice_sinks with a view in its place, and the pipeline runs on", async () => {
    const spec = ledgerSpec(fx.topic, {
      name: "legacy",
      source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 200 } },
      sink: { postgres: { table: "legacy_ledger" } },
    });
    const v1 = await registerPipelineVersion(fx.pool, spec);
    // The layout before the migration: the table at its own name, no mapping, no serving version.
    await fx.pool.query(`DROP VIEW legacy_ledger`);
    await fx.pool.query(`ALTER TABLE sluice_sinks."legacy_ledger@v1" SET SCHEMA public`);
    await fx.pool.query(`ALTER TABLE public."legacy_ledger@v1" RENAME TO legacy_ledger`);
    await fx.pool.query(
      `INSERT INTO legacy_ledger (event_id, type, merchant_id, customer_id, payment_id, seq, amount, currency, card_country, event_time, _topic, _partition, _offset, _ingest_time, _batch_id, _pipeline_version)
       VALUES ('before-the-move', 'settlement', 'm', 'c', 'p', 1, 1.5, 'USD', 'DE', now(), 't', 0, 0, now(), 0, $1)`,
      [v1.pipelineVersionId],
    );
    await fx.pool.query(
      `UPDATE pipeline_versions SET sink_tables = '{}' WHERE id = $1; UPDATE pipelines SET serving_version_id = NULL WHERE name = 'legacy'`.replace(
        "$1",
        `'${v1.pipelineVersionId}'`,
      ),
    );
    expect(await relkind("public", "legacy_ledger")).toBe("r");

    await fx.pool.query(await readFile(MIGRATION, "utf8"));

    expect(await relkind("public", "legacy_ledger")).toBe("v");
    expect(await relkind("sluice_sinks", "legacy_ledger@v1")).toBe("r");
    const moved = await fx.pool.query(`SELECT event_id FROM legacy_ledger`);
    expect(moved.rows).toEqual([{ event_id: "before-the-move" }]);
    const version = await fx.pool.query(
      `SELECT v.sink_tables, p.serving_version_id FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE v.id = $1`,
      [v1.pipelineVersionId],
    );
    expect(version.rows[0]).toEqual({
      sink_tables: { "public.legacy_ledger": "legacy_ledger@v1" },
      serving_version_id: v1.pipelineVersionId,
    });
    // Its key came along: the runner writes the moved table, and readers see every row through the view.
    const { progress } = await drainPipeline(fx, spec);
    const written = progress.reduce((n, p) => n + p.outcomes.sink, 0);
    expect(written).toBeGreaterThan(100);
    expect(await count("legacy_ledger")).toBe(written + 1);
    expect(await count(`sluice_sinks."legacy_ledger@v1"`)).toBe(written + 1);
    // Run again, it changes nothing.
    await fx.pool.query(await readFile(MIGRATION, "utf8"));
    expect(await count("legacy_ledger")).toBe(written + 1);
  });

  it("the migration names physical tables by physicalSinkTable's rule, long and schema-qualified names included", async () => {
    const sql = await readFile(MIGRATION, "utf8");
    const start = sql.indexOf("CREATE OR REPLACE FUNCTION");
    const fn = sql.slice(start, sql.indexOf("$$;", start) + 3);
    const client = await fx.pool.connect();
    try {
      await client.query(fn);
      for (const [serving, version] of [
        ["public.merchant_settlements", 1],
        ["finance.ledger", 12],
        [`public.${"a".repeat(60)}`, 3],
        [`finance.${"b".repeat(63)}`, 123],
      ] as const) {
        const res = await client.query<{ name: string }>(
          `SELECT pg_temp.sluice_physical_sink_table($1, $2) AS name`,
          [serving, version],
        );
        expect(res.rows[0]!.name).toBe(physicalSinkTable(serving, version));
        expect(Buffer.byteLength(res.rows[0]!.name)).toBeLessThanOrEqual(63);
      }
    } finally {
      client.release();
    }
  });

  it("a spec naming the sinks schema is refused", async () => {
    const spec = ledgerSpec(fx.topic, {
      name: "sneaky",
      sink: { postgres: { table: "sluice_sinks.served_ledger" } },
    });
    const refused = await registerPipelineVersion(fx.pool, spec).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(SinkClaimError);
    expect((refused as Error).message).toContain("sluice_sinks.served_ledger is in sluice_sinks");
  });
});
