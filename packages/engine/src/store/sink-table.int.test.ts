// Guarantee: runners that start together on one pipeline all get its sink table. Postgres' CREATE TABLE
// IF NOT EXISTS is not atomic: racing ones fail on a catalog index (found by the two-runners test, where
// the second runner exited 1 with `duplicate key value violates unique constraint
// "pg_type_typname_nsp_index"`). The loser now checks the table the winner made.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, endPool, type TestDatabase } from "@sluice/testing";
import { ensureSinkTable, sinkTableFor } from "./sink-table";

let database: TestDatabase;
let pool: pg.Pool;
beforeAll(async () => {
  database = await createTestDatabase("sink_table");
  pool = new pg.Pool({ connectionString: database.url, max: 12 });
});
afterAll(async () => {
  if (pool) await endPool(pool);
  await database?.drop();
});

describe("ensureSinkTable", () => {
  it("ten callers at once, five times over (one in a schema of its own): every call succeeds and the table is there once", async () => {
    const columns = [
      { name: "event_id", type: "string", optional: false },
      { name: "amount", type: "decimal", optional: true },
    ] as Parameters<typeof sinkTableFor>[1];
    for (const name of ["race_a", "race_b", "race_c", "race_d", "racing.race_e"]) {
      const table = sinkTableFor(name, columns, undefined, "append");
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, () => ensureSinkTable(pool, table)),
      );
      expect(
        results
          .filter((r) => r.status === "rejected")
          .map((r) => String((r as PromiseRejectedResult).reason)),
      ).toEqual([]);
      const [schema, bare] = name.includes(".") ? name.split(".") : ["public", name];
      const cols = await pool.query(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
        [schema, bare],
      );
      expect(cols.rows.map((r) => r.column_name).slice(0, 2)).toEqual(["event_id", "amount"]);
    }
  });
});
