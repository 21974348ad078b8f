// Writes of computed results (aggregate windows, CDC tables) inside the batch transaction: one
// statement per kind of change, rows selected from bulkRows (stage-rows.ts). Rows are plain column → value maps
// that already include Sluice's metadata columns. Every statement runs as the sink writer role
// (sink-writer-role.ts): it can reach the sinks schema's tables and nothing else.
import type pg from "pg";
import { postgresTypeFor, quoteIdentifier } from "@sluice/pipeline-spec";
import type { BulkColumn } from "./bulk";
import { METADATA_COLUMNS, type SinkTable } from "./sink-table";
import { asSinkWriter } from "./sink-writer-role";
import { bulkRows } from "./stage-rows";

export type ResultRow = Record<string, unknown>;

function tableColumns(table: SinkTable): { name: string; sqlType: string }[] {
  return [
    ...table.columns.map((c) => ({ name: c.name, sqlType: postgresTypeFor(c.type) })),
    ...(table.metadata ?? METADATA_COLUMNS),
  ];
}

async function rowsOf(
  client: pg.PoolClient,
  columns: { name: string; sqlType: string }[],
  rows: ResultRow[],
  firstParam = 1,
) {
  const cols: BulkColumn[] = columns.map((c) => ({
    name: c.name,
    sqlType: c.sqlType,
    values: rows.map((r) => r[c.name]),
  }));
  return {
    ...(await bulkRows(client, cols, firstParam)),
    names: columns.map((c) => quoteIdentifier(c.name)),
  };
}

function keyOf(table: SinkTable): string[] {
  if (!table.key || table.key.length === 0) throw new Error(`result table ${table.display} has no key`);
  return table.key;
}

/** Insert or replace rows by the table's key (the last row per key in `rows` wins). */
export async function upsertResultRows(
  client: pg.PoolClient,
  table: SinkTable,
  rows: ResultRow[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const key = keyOf(table);
  const byKey = new Map<string, ResultRow>();
  for (const r of rows)
    byKey.set(
      JSON.stringify(key.map((k) => (r[k] instanceof Date ? (r[k] as Date).toISOString() : r[k]))),
      r,
    );
  const columns = tableColumns(table);
  const { sql, params, names } = await rowsOf(client, columns, [...byKey.values()]);
  const updates = columns
    .filter((c) => !key.includes(c.name))
    .map((c) => `${quoteIdentifier(c.name)} = EXCLUDED.${quoteIdentifier(c.name)}`);
  const res = await asSinkWriter(client, () =>
    client.query(
      `INSERT INTO ${table.sql} (${names.join(", ")}) ${sql} ON CONFLICT (${key.map(quoteIdentifier).join(", ")}) DO UPDATE SET ${updates.join(", ")}`,
      params,
    ),
  );
  return res.rowCount ?? 0;
}

/** Insert rows once (a final window is written once; the key makes a second write impossible). */
export async function insertResultRows(
  client: pg.PoolClient,
  table: SinkTable,
  rows: ResultRow[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const { sql, params, names } = await rowsOf(client, tableColumns(table), rows);
  const res = await asSinkWriter(client, () =>
    client.query(`INSERT INTO ${table.sql} (${names.join(", ")}) ${sql} ON CONFLICT DO NOTHING`, params),
  );
  return res.rowCount ?? 0;
}

/** Delete the rows with these key values. */
export async function deleteResultRows(
  client: pg.PoolClient,
  table: SinkTable,
  keys: ResultRow[],
): Promise<number> {
  if (keys.length === 0) return 0;
  const key = keyOf(table);
  const columns = tableColumns(table).filter((c) => key.includes(c.name));
  const { sql, params, names } = await rowsOf(client, columns, keys);
  const match = names.map((n) => `t.${n} IS NOT DISTINCT FROM d.${n}`).join(" AND ");
  const res = await asSinkWriter(client, () =>
    client.query(
      `DELETE FROM ${table.sql} t USING (${sql}) AS d (${names.join(", ")}) WHERE ${match}`,
      params,
    ),
  );
  return res.rowCount ?? 0;
}

/** Set some columns of existing rows, matched by the table's key. */
export async function updateResultColumns(
  client: pg.PoolClient,
  table: SinkTable,
  rows: ResultRow[],
  set: string[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const key = keyOf(table);
  const columns = tableColumns(table).filter((c) => key.includes(c.name) || set.includes(c.name));
  const { sql, params, names } = await rowsOf(client, columns, rows);
  const q = (c: string) => quoteIdentifier(c);
  const assignments = set.map((c) => `${q(c)} = u.${q(c)}`).join(", ");
  const match = key.map((k) => `t.${q(k)} = u.${q(k)}`).join(" AND ");
  const res = await asSinkWriter(client, () =>
    client.query(
      `UPDATE ${table.sql} t SET ${assignments} FROM (${sql}) AS u (${names.join(", ")}) WHERE ${match}`,
      params,
    ),
  );
  return res.rowCount ?? 0;
}

/** Complete mode: the whole result is rewritten. */
export async function replaceResultRows(
  client: pg.PoolClient,
  table: SinkTable,
  rows: ResultRow[],
): Promise<number> {
  await asSinkWriter(client, () => client.query(`DELETE FROM ${table.sql}`));
  return insertResultRows(client, table, rows);
}
