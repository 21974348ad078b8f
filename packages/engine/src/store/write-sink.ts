// Writes a batch's sink rows in the batch transaction. An append ledger keyed by event id ignores
// keys already present (a replay cannot insert twice; those rows are counted as duplicates), and of a
// key repeated inside the batch keeps the first copy, as dedup state would; upsert replaces the row
// with the same key (the last one in the batch wins). Both are decided here, before the INSERT: the
// rows reach Postgres through a stage table that does not read back in the order given
// (stage-rows.ts). Written as the sink writer role (sink-writer-role.ts).
import type pg from "pg";
import { postgresTypeFor, quoteIdentifier } from "@sluice/pipeline-spec";
import type { SinkRow } from "../batch/process-batch";
import type { BulkColumn } from "./bulk";
import { METADATA_COLUMNS, type SinkTable } from "./sink-table";
import { asSinkWriter } from "./sink-writer-role";
import { bulkRows } from "./stage-rows";

export interface SinkWriteMeta {
  topic: string;
  batchId: number;
  pipelineVersionId: string;
}

/**
 * Returns how many rows were written; the rest hit an existing key of an append ledger. With
 * `written`, also which rows ("partition:offset") were written — a replay batch records each row's
 * outcome; ordinary batches only count, and pay nothing for it.
 */
export async function writeSinkRows(
  client: pg.PoolClient,
  table: SinkTable,
  rows: SinkRow[],
  meta: SinkWriteMeta,
  written?: Set<string>,
): Promise<number> {
  if (rows.length === 0) return 0;
  const batchRows = table.key ? onePerKey(rows, table.key, table.mode) : rows;

  const columns: BulkColumn[] = [
    ...table.columns.map((c) => ({
      name: c.name,
      sqlType: postgresTypeFor(c.type),
      values: batchRows.map((r) => r.values[c.name]),
    })),
    ...METADATA_COLUMNS.filter((c) => !PER_BATCH.has(c.name)).map((c) => ({
      name: c.name,
      sqlType: c.sqlType,
      values: batchRows.map((r) => metadataValue(c.name, r, meta)),
    })),
  ];
  // Performance: values that are the same for every row of the batch are sent once, as scalar
  // parameters after the arrays, instead of as arrays of 20k identical strings.
  const constants = METADATA_COLUMNS.filter((c) => PER_BATCH.has(c.name));
  const { sql: select, params } = await bulkRows(client, columns);
  const constantSql = constants.map((c, i) => `$${params.length + i + 1}::${c.sqlType}`);
  const all = [...columns, ...constants];
  const names = all.map((c) => quoteIdentifier(c.name)).join(", ");
  const conflict = onConflict(table, all);
  const returning = written ? ` RETURNING "_partition", "_offset"` : "";
  const res = await asSinkWriter(client, () =>
    client.query<{ _partition: number; _offset: string }>(
      `INSERT INTO ${table.sql} (${names}) SELECT ${["u.*", ...constantSql].join(", ")} FROM (${select}) AS u ${conflict}${returning}`,
      [...params, ...constants.map((c) => metadataValue(c.name, batchRows[0]!, meta))],
    ),
  );
  // Upserted rows that collapsed onto a later row of their key reached the sink, then were
  // overwritten in this batch; appended rows that repeated an earlier row's key are duplicates.
  const overwritten = table.mode === "upsert" ? rows.length - batchRows.length : 0;
  if (written) {
    for (const r of res.rows) written.add(`${r._partition}:${r._offset}`);
    if (overwritten > 0) for (const r of rows) written.add(`${r.partition}:${r.offset}`);
  }
  return (res.rowCount ?? 0) + overwritten;
}

const PER_BATCH = new Set(["_topic", "_batch_id", "_pipeline_version"]);

function onConflict(table: SinkTable, columns: { name: string }[]): string {
  if (!table.key) return "ON CONFLICT DO NOTHING";
  const key = table.key.map(quoteIdentifier).join(", ");
  if (table.mode === "append") return `ON CONFLICT (${key}) DO NOTHING`;
  const keySet = new Set(table.key);
  const updates = columns
    .filter((c) => !keySet.has(c.name))
    .map((c) => `${quoteIdentifier(c.name)} = EXCLUDED.${quoteIdentifier(c.name)}`);
  return `ON CONFLICT (${key}) DO UPDATE SET ${updates.join(", ")}`;
}

function metadataValue(name: string, row: SinkRow, meta: SinkWriteMeta): unknown {
  switch (name) {
    case "_rescued":
      return row.rescued;
    case "_topic":
      return meta.topic;
    case "_partition":
      return row.partition;
    case "_offset":
      return row.offset;
    case "_ingest_time":
      return row.ingestTimeMs;
    case "_batch_id":
      return meta.batchId;
    case "_pipeline_version":
      return meta.pipelineVersionId;
    default:
      throw new Error(`unknown metadata column ${name}`);
  }
}

/**
 * One row per key: upsert keeps the last (ON CONFLICT DO UPDATE cannot touch a row twice in one
 * statement), append the first (the copy at the lowest source position, whatever order the stage
 * table reads back in). Rows keep the batch's order.
 */
function onePerKey(rows: SinkRow[], key: string[], mode: SinkTable["mode"]): SinkRow[] {
  const byKey = new Map<unknown, SinkRow>();
  // A single text or number key is its own map key; anything else (a date, several columns) as JSON.
  const keyOf =
    key.length === 1
      ? (row: SinkRow) => {
          const v = row.values[key[0]!];
          return typeof v === "object" && v !== null ? JSON.stringify(v) : v;
        }
      : (row: SinkRow) => JSON.stringify(key.map((k) => row.values[k]));
  for (const row of rows) {
    const k = keyOf(row);
    if (mode === "upsert" || !byKey.has(k)) byKey.set(k, row);
  }
  return byKey.size === rows.length ? rows : [...byKey.values()];
}
