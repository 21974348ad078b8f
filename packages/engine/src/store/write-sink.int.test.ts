// Guarantee: an append ledger keyed by event id keeps the FIRST copy of a key that repeats inside one
// batch — the copy at the lower source position, as dedup state would, and as the small-batch path
// (one JSON parameter, read back in order) always did. A large batch is staged with COPY into a
// temporary table (stage-rows.ts), and a heap reads back in page order, not in COPY order: rows of
// varying size fill pages unevenly and Postgres puts a later, smaller row into an earlier page with
// room (the free space map) — from the second batch a connection stages on, once the table was
// emptied at a commit — so `INSERT … SELECT … ON CONFLICT DO NOTHING` met the later copy first and
// kept it. Found by the ledger benchmark (bench/src/ledger-writes.ts): a ledger with dedup state
// and one with the key alone differed in the source position of one event id in 200,000.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, endPool, type TestDatabase } from "@sluice/testing";
import type { SinkRow } from "../batch/process-batch";
import { ensureSinkTable, sinkTableFor } from "./sink-table";
import { grantSinkWriter } from "./sink-writer-role";
import { STAGE_FROM_ROWS } from "./stage-rows";
import { writeSinkRows } from "./write-sink";

let db: TestDatabase;
let pool: pg.Pool;
beforeAll(async () => {
  db = await createTestDatabase("write_sink");
  // One connection: its stage table is reused batch after batch, as a runner's is.
  pool = new pg.Pool({ connectionString: db.url, max: 1 });
});
afterAll(async () => {
  if (pool) await endPool(pool);
  await db?.drop();
});

const columns = [
  { name: "event_id", type: "string", optional: false },
  { name: "note", type: "string", optional: true },
] as Parameters<typeof sinkTableFor>[1];

/** Deterministic sizes from 40 to ~1,900 bytes (below TOAST), so pages fill unevenly. */
function sizes(n: number): number[] {
  let x = 12345;
  return Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return 40 + (x % 1860);
  });
}

function row(offset: number, eventId: string, size: number): SinkRow {
  return {
    values: { event_id: eventId, note: "x".repeat(size) },
    rescued: null,
    partition: 0,
    offset,
    ingestTimeMs: 1_700_000_000_000 + offset,
  };
}

async function write(table: ReturnType<typeof sinkTableFor>, rows: SinkRow[], written?: Set<string>) {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const n = await writeSinkRows(
      client,
      table,
      rows,
      { topic: "t", batchId: 0, pipelineVersionId: "pv" },
      written,
    );
    await client.query("COMMIT");
    return n;
  } finally {
    client.release();
  }
}

describe("an append ledger keyed by event id", () => {
  it("keeps the first copy of every key repeated inside a staged batch, and counts the rest as not written", async () => {
    const n = 4 * STAGE_FROM_ROWS;
    const size = sizes(n);
    // One row in seven repeats the id of the row 3 to 60 rows before it (different size, so the
    // copies land on different pages), over the whole batch.
    const rows = size.map((s, i) =>
      i % 7 === 6 ? row(i, `evt_${i - 3 - (i % 58)}`, s) : row(i, `evt_${i}`, s),
    );
    const firstOffset = new Map<string, number>();
    for (const r of rows)
      if (!firstOffset.has(r.values.event_id as string))
        firstOffset.set(r.values.event_id as string, r.offset);

    const table = sinkTableFor("ledger_first_copy", columns, ["event_id"], "append");
    await ensureSinkTable(pool, table);
    await grantSinkWriter(pool, table.sql);
    // An earlier batch on the connection, as in a running pipeline: its stage table now has pages
    // with room for later rows.
    const earlier = sizes(2 * STAGE_FROM_ROWS).map((s, i) => row(-1 - i, `earlier_${i}`, s));
    expect(await write(table, earlier)).toBe(earlier.length);
    const written = new Set<string>();
    expect(await write(table, rows, written)).toBe(firstOffset.size);

    const stored = await pool.query<{ event_id: string; _offset: string }>(
      `SELECT event_id, _offset FROM ledger_first_copy WHERE event_id LIKE 'evt\\_%'`,
    );
    const kept = new Map(stored.rows.map((r) => [r.event_id, Number(r._offset)]));
    const laterCopies = [...firstOffset].filter(([id, offset]) => kept.get(id) !== offset);
    expect(laterCopies).toEqual([]);
    expect(kept.size).toBe(firstOffset.size);
    // A replay batch learns which rows reached the sink: exactly the first copies.
    expect([...written].sort()).toEqual([...firstOffset.values()].map((o) => `0:${o}`).sort());

    // The next batch repeating ids already stored writes none of them.
    const again = rows.slice(0, STAGE_FROM_ROWS).map((r) => ({ ...r, offset: r.offset + n }));
    expect(await write(table, again)).toBe(0);
  });

  it("an upsert ledger still keeps the LAST row of a key repeated inside the batch", async () => {
    const rows = sizes(2 * STAGE_FROM_ROWS).map((s, i) => row(i, `evt_${i % 500}`, s));
    const table = sinkTableFor("ledger_last_row", columns, ["event_id"], "upsert");
    await ensureSinkTable(pool, table);
    await grantSinkWriter(pool, table.sql);
    // Every row reached the sink (the earlier ones were overwritten within the batch).
    expect(await write(table, rows)).toBe(rows.length);
    const stored = await pool.query<{ event_id: string; _offset: string }>(
      `SELECT event_id, _offset FROM ledger_last_row ORDER BY event_id`,
    );
    expect(stored.rows.length).toBe(500);
    for (const r of stored.rows)
      expect(Number(r._offset)).toBe(rows.length - 500 + Number(r.event_id.slice(4)));
  });
});
