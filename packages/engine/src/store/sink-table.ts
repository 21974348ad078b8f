// The Postgres sink table: created from the pipeline's output columns, or validated when it exists.
// Names come from the validated spec and are always quoted with quoteIdentifier — never raw.
import type pg from "pg";
import {
  outputColumns,
  postgresTypeFor,
  quoteIdentifier,
  splitQualifiedName,
  type TColumn,
  type TPipelineSpec,
} from "@sluice/pipeline-spec";
import { ConfigurationError } from "../errors";
import { physicalSql, SINK_SCHEMA } from "./physical-sink-table";
import { grantSinkWriter } from "./sink-writer-role";
import type { SqlClient } from "./sql-client";

/** Columns Sluice adds to every sink row: where it came from and which batch wrote it. */
export const METADATA_COLUMNS: { name: string; sqlType: string }[] = [
  { name: "_rescued", sqlType: "jsonb" },
  { name: "_topic", sqlType: "text" },
  { name: "_partition", sqlType: "integer" },
  { name: "_offset", sqlType: "bigint" },
  { name: "_ingest_time", sqlType: "timestamptz" },
  { name: "_batch_id", sqlType: "bigint" },
  { name: "_pipeline_version", sqlType: "text" },
];

export interface SinkTable {
  /** Quoted, schema-qualified name, safe to put in SQL. */
  sql: string;
  /** For people: the serving name in the spec (and the physical table, when it is one). */
  display: string;
  /** Where the table is, as information_schema names it. */
  schema: string;
  name: string;
  columns: TColumn[];
  /** Primary key columns; absent for a keyless append (then the source position is unique). */
  key: string[] | undefined;
  mode: "append" | "upsert";
  /** Sluice's own columns; default METADATA_COLUMNS (source position). Aggregates use RESULT_METADATA_COLUMNS. */
  metadata?: { name: string; sqlType: string }[];
}

/** An aggregate's rows come from many source rows: they carry the batch and version that last wrote them. */
export const RESULT_METADATA_COLUMNS: { name: string; sqlType: string }[] = [
  { name: "_batch_id", sqlType: "bigint" },
  { name: "_pipeline_version", sqlType: "text" },
];

export function sinkTableFor(
  table: string,
  columns: TColumn[],
  key: string[] | undefined,
  mode: "append" | "upsert",
): SinkTable {
  const { schema, table: name } = splitQualifiedName(table);
  const sql = schema ? `${quoteIdentifier(schema)}.${quoteIdentifier(name)}` : quoteIdentifier(name);
  return { sql, display: table, schema: schema ?? "public", name, columns, key, mode };
}

/**
 * The physical table a version writes for one output (a spec with one sink, or one output's view):
 * its columns, key and Sluice's metadata columns (an aggregate's rows carry RESULT_METADATA_COLUMNS).
 * Undefined for a webhook sink.
 */
export function outputSinkTable(spec: TPipelineSpec, physical: string): SinkTable | undefined {
  const pgSink = spec.sink?.postgres;
  if (!pgSink) return undefined;
  const table: SinkTable = {
    sql: physicalSql(physical),
    display: `${pgSink.table} (${SINK_SCHEMA}.${physical})`,
    schema: SINK_SCHEMA,
    name: physical,
    columns: outputColumns(spec),
    key: pgSink.key,
    mode: pgSink.mode,
  };
  return spec.aggregate ? { ...table, metadata: RESULT_METADATA_COLUMNS } : table;
}

/** The columns and constraint a new sink table is created with. */
function createTableSql(t: SinkTable): string {
  const cols = wantedColumns(t).map(
    (c) => `${quoteIdentifier(c.name)} ${c.sqlType}${c.notNull ? " NOT NULL" : ""}`,
  );
  const unique = t.key
    ? `PRIMARY KEY (${t.key.map(quoteIdentifier).join(", ")})`
    : `UNIQUE ("_pipeline_version", "_topic", "_partition", "_offset")`;
  return `(${[...cols, unique].join(", ")})`;
}

function wantedColumns(t: SinkTable): { name: string; sqlType: string; notNull: boolean }[] {
  return [
    ...t.columns.map((c) => ({ name: c.name, sqlType: postgresTypeFor(c.type), notNull: !c.optional })),
    ...(t.metadata ?? METADATA_COLUMNS).map((c) => ({ ...c, notNull: c.name !== "_rescued" })),
  ];
}

/**
 * Creates a physical table inside the caller's transaction (a registration). One that exists is an
 * error (a new version's table is new), unless `ifMissing` (an inherited table is left as it is).
 */
export async function createSinkTableIn(
  db: SqlClient,
  t: SinkTable,
  opts: { ifMissing?: boolean } = {},
): Promise<void> {
  await db.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(t.schema)}`);
  await db.query(`CREATE TABLE ${opts.ifMissing ? "IF NOT EXISTS " : ""}${t.sql} ${createTableSql(t)}`);
  await grantSinkWriter(db, t.sql);
}

// information_schema's data_type for each SQL type we create.
const INFO_TYPE: Record<string, string> = {
  text: "text",
  bigint: "bigint",
  integer: "integer",
  numeric: "numeric",
  "double precision": "double precision",
  boolean: "boolean",
  timestamptz: "timestamp with time zone",
  jsonb: "jsonb",
};

export async function ensureSinkTable(db: pg.Pool | pg.PoolClient, t: SinkTable): Promise<void> {
  const existing = await db.query<{ column_name: string; data_type: string }>(
    `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2`,
    [t.schema, t.name],
  );
  const wanted = wantedColumns(t);

  if (existing.rowCount === 0) {
    try {
      if (t.schema !== "public") await db.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(t.schema)}`);
      await db.query(`CREATE TABLE IF NOT EXISTS ${t.sql} ${createTableSql(t)}`);
      await grantSinkWriter(db, t.sql);
    } catch (err) {
      // Two runners creating it at the same moment: IF NOT EXISTS is not atomic in Postgres, and the
      // second fails on a catalog index (23505) or as a duplicate table, schema or row type (42P07,
      // 42P06, 42710). It exists now: check it like any existing table.
      if (!isConcurrentCreate(err)) throw err;
      return ensureSinkTable(db, t);
    }
    return;
  }
  const have = new Map(existing.rows.map((r) => [r.column_name, r.data_type]));
  const problems = wanted.flatMap((c) => {
    const type = have.get(c.name);
    if (type === undefined) return [`column "${c.name}" (${c.sqlType}) is missing`];
    if (type !== INFO_TYPE[c.sqlType])
      return [`column "${c.name}" is ${type}, the pipeline writes ${c.sqlType}`];
    return [];
  });
  if (problems.length > 0) {
    throw new ConfigurationError(
      `sink table ${t.display} exists but does not match the pipeline's output: ${problems.join("; ")}. ` +
        `Alter the table, or point sink.postgres.table at a new table.`,
    );
  }
}

function isConcurrentCreate(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === "23505" || code === "42P07" || code === "42P06" || code === "42710";
}
