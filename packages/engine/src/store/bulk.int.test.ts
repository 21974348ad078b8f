// Guarantee behind every bulk write (sink rows, dedup state, dead letters, window and CDC state): what
// the engine sends — as one JSON array of rows, or staged with COPY when the set is large
// (stage-rows.ts) — arrives in Postgres unchanged, whatever the value holds —
// quotes, backslashes, commas, braces, the text "NULL", empty strings, JSON (a JSON null included),
// bytes, NaN and infinite doubles, timestamps to the millisecond near and far from 1970. Round-trips through the real database.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, endPool, type TestDatabase } from "@sluice/testing";
import { bulkRows } from "./stage-rows";

let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase("bulk");
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
});
afterAll(async () => {
  if (pool) await endPool(pool);
  await db?.drop();
});

// Both paths: the JSON parameter (small sets), and COPY into a stage table (forced from 1 row here).
describe.each([
  { path: "as JSON", stageFromRows: Number.POSITIVE_INFINITY },
  { path: "staged with COPY", stageFromRows: 1 },
])("bulk rows $path", ({ stageFromRows }) => {
  it("round-trip text, numbers, booleans, timestamps, jsonb and bytea exactly, nulls included", async () => {
    const text = [
      "plain",
      'with "quotes"',
      "back\\slash",
      "a,b",
      "{braces}",
      "NULL",
      "",
      "  spaced\tand tabbed\nover lines\r  ",
      "ünï©ødé ✓",
      '\\"mixed\\"',
      null,
    ];
    const bigint = [0, -1, 9007199254740991, 42, 7, 8, 9, 10, 11, 12, null];
    const numeric = [
      "0",
      "-12.50",
      "12345678901234567890.123456789",
      "1",
      "2",
      "3",
      "4",
      "5",
      "6",
      "7",
      null,
    ];
    const bool = [true, false, true, false, true, false, true, false, true, false, null];
    // Epoch milliseconds near 1970, ISO text far from it (years 1, 1500, 9999, 200000 and 4713 BC).
    const far = [
      Date.UTC(1, 0, 1, 0, 0, 0, 1),
      Date.UTC(1500, 5, 6, 7, 8, 9, 999),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(200000, 0, 1, 0, 0, 0, 7),
      -210866803200000,
    ];
    const time = text.map((_, i) =>
      i === 10 ? null : i < 5 ? new Date(far[i]!) : new Date(Date.UTC(2025, 0, 1, 0, 0, i, 123)),
    );
    const json: unknown[] = [
      { a: 'q"uote' },
      ["x", 1],
      "just a string",
      12.5,
      { nested: { "back\\slash": [null, true] } },
      {},
      [],
      "NULL",
      { s: "{,}" },
      0,
      null,
    ];
    // A JSON null inside a value is kept; a null value is SQL NULL.
    json[9] = { inner: null };
    const bytes = text.map((_, i) => (i === 10 ? null : Buffer.from([0, i, 255, 92, 34])));
    // Numbers JSON has no literal for travel as text, not as null.
    const double = [
      0,
      -1.5,
      1e300,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      5e-324,
      7,
      8,
      9,
      null,
    ];

    const columns = [
      { name: "text", sqlType: "text", values: text },
      { name: "bigint", sqlType: "bigint", values: bigint },
      { name: "numeric", sqlType: "numeric", values: numeric },
      { name: "bool", sqlType: "boolean", values: bool },
      { name: "time", sqlType: "timestamptz", values: time },
      { name: "json", sqlType: "jsonb", values: json },
      { name: "bytes", sqlType: "bytea", values: bytes },
      { name: "double", sqlType: "double precision", values: double },
    ];
    const client = await pool.connect();
    let res: pg.QueryResult;
    try {
      await client.query("BEGIN");
      const { sql, params } = await bulkRows(client, columns, 1, stageFromRows);
      res = await client.query(
        `SELECT t, b::text AS b, n::text AS n, x, ts, j, by, d FROM (${sql}) AS u (t, b, n, x, ts, j, by, d)`,
        params,
      );
      // Staged twice in one transaction (two outputs of one shape): the second set alone.
      const again = await bulkRows(
        client,
        columns.map((c) => ({ ...c, values: c.values.slice(0, 2) })),
        1,
        stageFromRows,
      );
      const second = await client.query(`SELECT * FROM (${again.sql}) AS u`, again.params);
      expect(second.rows).toHaveLength(2);
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    expect(res.rows.map((r) => r.t)).toEqual(text);
    expect(res.rows.map((r) => (r.b === null ? null : Number(r.b)))).toEqual(bigint);
    expect(res.rows.map((r) => r.n)).toEqual(numeric);
    expect(res.rows.map((r) => r.x)).toEqual(bool);
    expect(res.rows.map((r) => r.ts)).toEqual(time);
    expect(res.rows.map((r) => r.j)).toEqual(json);
    expect(res.rows.map((r) => r.by)).toEqual(bytes);
    expect(res.rows.map((r) => r.d)).toEqual(double);
  });

  it("refuses columns of different lengths", async () => {
    const client = await pool.connect();
    try {
      await expect(
        bulkRows(
          client,
          [
            { name: "a", sqlType: "text", values: ["x", "y"] },
            { name: "b", sqlType: "text", values: ["x"] },
          ],
          1,
          stageFromRows,
        ),
      ).rejects.toThrow(/has 1 values, expected 2/);
    } finally {
      client.release();
    }
  });
});
