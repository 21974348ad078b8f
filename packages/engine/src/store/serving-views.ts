// The serving name readers query (the table name in the spec) is a view over the serving version's
// physical table (physical-sink-table.ts). This file is the one place those views are made: at a
// version's registration when it serves, when an approved schema change alters a physical table's
// columns (a `SELECT *` view keeps the column list it was created with), and when a rollout's
// promotion or rollback switches readers. Each runs inside the caller's transaction: Postgres DDL is
// transactional, so a reader sees the old view or the new one, never none, and a query that waits on
// the switch's lock reads the new one once it commits.
import type pg from "pg";
import { quoteIdentifier, quoteQualifiedName, splitQualifiedName } from "@sluice/pipeline-spec";
import { physicalSql, type SinkTableMap } from "./physical-sink-table";
import type { SqlClient } from "./sql-client";

/** The version's serving name → physical table map (empty for a version without postgres sinks). */
export async function loadSinkTables(db: SqlClient, pipelineVersionId: string): Promise<SinkTableMap> {
  const res = await db.query<{ sink_tables: SinkTableMap | string }>(
    `SELECT sink_tables FROM pipeline_versions WHERE id = $1`,
    [pipelineVersionId],
  );
  const value = res.rows[0]?.sink_tables ?? {};
  return typeof value === "string" ? (JSON.parse(value) as SinkTableMap) : value;
}

/** Drops the serving view (a table at that name is an error: it was never moved into the sinks schema). */
export async function dropServingView(db: SqlClient, serving: string): Promise<void> {
  await db.query(`DROP VIEW IF EXISTS ${quoteQualifiedName(serving)}`);
}

/** (Re)creates the serving view over `physical`, with the physical table's columns as they are now. */
export async function createServingView(db: SqlClient, serving: string, physical: string): Promise<void> {
  const { schema } = splitQualifiedName(serving);
  if (schema && schema !== "public") await db.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
  await dropServingView(db, serving);
  await db.query(`CREATE VIEW ${quoteQualifiedName(serving)} AS SELECT * FROM ${physicalSql(physical)}`);
}

/**
 * Makes `pipelineVersionId` the pipeline's serving version: every one of its sink tables' serving
 * views selects from its physical tables, and pipelines.serving_version_id names it.
 */
export async function serveVersion(db: SqlClient, pipelineVersionId: string): Promise<void> {
  const tables = await loadSinkTables(db, pipelineVersionId);
  for (const [serving, physical] of Object.entries(tables).sort(([a], [b]) => a.localeCompare(b)))
    await createServingView(db, serving, physical);
  await db.query(
    `UPDATE pipelines SET serving_version_id = v.id FROM pipeline_versions v WHERE v.id = $1 AND pipelines.id = v.pipeline_id`,
    [pipelineVersionId],
  );
}

/**
 * At a runner's start: the serving view of a serving version's table, when there is none yet (a table
 * registered before views existed and never run, so there was nothing to move into the sinks schema).
 */
export async function ensureServingView(
  pool: pg.Pool,
  serving: string,
  physical: string,
  pipelineVersionId: string,
): Promise<void> {
  const check = `SELECT to_regclass($1) IS NULL AS missing,
          EXISTS (SELECT 1 FROM pipelines p WHERE p.serving_version_id = $2) AS serving`;
  const args = [quoteQualifiedName(serving), pipelineVersionId];
  const first = await pool.query<{ missing: boolean; serving: boolean }>(check, args);
  if (!first.rows[0]?.missing || !first.rows[0].serving) return;
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query(
      `SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(hashtext('sluice.serving.' || $1))) l`,
      [serving],
    );
    const again = await client.query<{ missing: boolean; serving: boolean }>(check, args);
    if (again.rows[0]?.missing && again.rows[0].serving) await createServingView(client, serving, physical);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
