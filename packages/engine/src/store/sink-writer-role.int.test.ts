// Sink rows are written as sluice_sink_writer (#19 item 5), against real Postgres and Kafka: whatever
// table a sink write names, Postgres refuses it unless it is in the sinks schema — a write aimed at a
// control-plane or engine table is "permission denied" and changes nothing — while the rest of the
// batch's transaction (checkpoint, state) still runs as the app's user; a pipeline's batches really
// write as the writer (take its privilege on the table away and the batch fails, committing nothing).
import type pg from "pg";
import { producePayments } from "@sluice/producer";
import { quoteIdentifier } from "@sluice/pipeline-spec";
import { createTestUsers } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelineRunner } from "../runner/pipeline-runner";
import { createEngineFixture, ledgerSpec, type EngineFixture } from "../testing/engine-fixture";
import { physicalSql } from "./physical-sink-table";
import { registerPipelineVersion } from "./register-version";
import { loadSinkTables } from "./serving-views";
import { sinkTableFor } from "./sink-table";
import { asSinkWriter, SINK_WRITER_ROLE } from "./sink-writer-role";
import { deleteResultRows, insertResultRows, replaceResultRows } from "./write-result";

let fx: EngineFixture;
let pool: pg.Pool;

beforeAll(async () => {
  fx = await createEngineFixture("sink_writer_role");
  pool = fx.pool;
  await createTestUsers(pool, [
    { email: "ada@example.com", role: "admin" },
    { email: "olly@example.com", role: "operator", teams: ["payments"] },
  ]);
});
afterAll(() => fx?.close());

/** Runs `fn` in a transaction that is always rolled back; its error, if any. */
async function inTransaction(fn: (client: pg.PoolClient) => Promise<unknown>): Promise<Error | null> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await fn(client);
    return null;
  } catch (err) {
    return err as Error;
  } finally {
    await client.query("ROLLBACK").catch(() => undefined);
    client.release();
  }
}

const count = async (table: string) =>
  Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${quoteIdentifier(table)}`)).rows[0]!.n);

describe("the sink writer role", () => {
  it("a sink write aimed at a control-plane table is refused by Postgres (permission denied) and changes nothing", async () => {
    const before = { users: await count("users"), members: await count("team_members") };
    // Complete mode rewrites its table: DELETE, then INSERT — here aimed at the people of the install.
    const users = sinkTableFor("users", [], ["id"], "upsert");
    expect((await inTransaction((c) => replaceResultRows(c, users, [])))?.message).toBe(
      "permission denied for table users",
    );
    const members = sinkTableFor(
      "team_members",
      [{ name: "user_id", type: "string", optional: false }],
      ["user_id"],
      "upsert",
    );
    expect(
      (await inTransaction((c) => deleteResultRows(c, { ...members, metadata: [] }, [{ user_id: "x" }])))
        ?.message,
    ).toBe("permission denied for table team_members");
    expect({ users: await count("users"), members: await count("team_members") }).toEqual(before);

    // Nothing outside the sinks schema is reachable as the writer, reading included.
    for (const table of [
      "users",
      "sessions",
      "accounts",
      "team_members",
      "audit_events",
      "sink_claims",
      "pipeline_versions",
      "checkpoints",
      "offset_log",
      "dedup_state",
      "window_state",
    ])
      expect(
        (
          await inTransaction((c) =>
            asSinkWriter(c, () => c.query(`SELECT 1 FROM ${quoteIdentifier(table)}`)),
          )
        )?.message,
        table,
      ).toBe(`permission denied for table ${table}`);
  });

  it("a table in the sinks schema is the writer's; after the write the transaction runs as the app's user again", async () => {
    await pool.query(
      `CREATE TABLE sluice_sinks."writer_probe@v1" (id text PRIMARY KEY, _batch_id bigint, _pipeline_version text)`,
    );
    const probe = {
      ...sinkTableFor("writer_probe", [{ name: "id", type: "string", optional: false }], ["id"], "append"),
      sql: `sluice_sinks."writer_probe@v1"`,
      metadata: [
        { name: "_batch_id", sqlType: "bigint" },
        { name: "_pipeline_version", sqlType: "text" },
      ],
    };
    const client = await pool.connect();
    try {
      const app = (await client.query<{ u: string }>(`SELECT current_user AS u`)).rows[0]!.u;
      await client.query("BEGIN");
      const written = await insertResultRows(client, probe, [
        { id: "a", _batch_id: 1, _pipeline_version: "pv" },
        { id: "b", _batch_id: 1, _pipeline_version: "pv" },
      ]);
      expect(written).toBe(2);
      const whoWrote = await asSinkWriter(client, () =>
        client.query<{ u: string }>(`SELECT current_user AS u FROM sluice_sinks."writer_probe@v1" LIMIT 1`),
      );
      expect(whoWrote.rows[0]!.u).toBe(SINK_WRITER_ROLE);
      // Back to the app's user for the rest of the commit (checkpoints, state, dead letters).
      expect((await client.query<{ u: string }>(`SELECT current_user AS u`)).rows[0]!.u).toBe(app);
      await client.query(`SELECT count(*) FROM users`);
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    expect(await pool.query(`SELECT id FROM sluice_sinks."writer_probe@v1" ORDER BY id`)).toMatchObject({
      rows: [{ id: "a" }, { id: "b" }],
    });
  });

  it("a pipeline's batch writes its table as the writer: with the writer's INSERT on it revoked the batch fails and commits nothing; granted again, it commits", async () => {
    await producePayments({
      topic: fx.topic,
      kafka: fx.kafka,
      count: 300,
      partitions: 1,
      seed: 5,
      idPrefix: "writer",
      log: () => undefined,
    });
    const spec = ledgerSpec(fx.topic, {
      name: "writer-ledger",
      source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 100 } },
      sink: { postgres: { table: "writer_ledger" } },
    });
    const { pipelineVersionId } = await registerPipelineVersion(pool, spec);
    const physical = (await loadSinkTables(pool, pipelineVersionId))["public.writer_ledger"]!;
    const open = () =>
      PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner: "test", readAhead: false });
    const state = async () => ({
      rows: Number((await pool.query(`SELECT count(*) AS n FROM ${physicalSql(physical)}`)).rows[0].n),
      lastBatch: Number(
        (
          await pool.query(`SELECT last_batch_id AS n FROM checkpoints WHERE pipeline_version_id = $1`, [
            pipelineVersionId,
          ])
        ).rows[0].n,
      ),
    });

    const runner = await open();
    try {
      expect((await runner.runBatch()).kind).toBe("committed");
      const before = await state();
      expect(before.rows).toBeGreaterThan(0);
      await pool.query(`REVOKE INSERT ON ${physicalSql(physical)} FROM ${SINK_WRITER_ROLE}`);
      await expect(runner.runBatch()).rejects.toThrow(`permission denied for table ${physical}`);
      expect(await state()).toEqual(before);
    } finally {
      await runner.close();
    }
    await pool.query(`GRANT INSERT ON ${physicalSql(physical)} TO ${SINK_WRITER_ROLE}`);
    const again = await open();
    try {
      expect((await again.runBatch()).kind).toBe("committed");
    } finally {
      await again.close();
    }
    expect((await state()).rows).toBeGreaterThan(0);
  });
});
