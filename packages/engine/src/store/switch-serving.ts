// A rollout's moves on the data plane, each inside the caller's transaction (docs/rollouts.md):
// promotion and rollback switch the serving version — the serving views move to the other version's
// physical tables and pipelines.serving_version_id follows, while the version that stops serving is
// fenced (its runner's next plan or commit fails) but not superseded, so a rollback can resume it from
// its own checkpoint. Abort — or the end of the time a stopped side is kept — retires a version:
// superseded for good, its state and the physical tables only it wrote dropped. Postgres DDL is
// transactional, so a reader of a serving name sees the old version's rows or the new version's,
// never none and never both.
import { ConfigurationError } from "../errors";
import { physicalSql } from "./physical-sink-table";
import { loadSinkTables, serveVersion } from "./serving-views";
import type { SqlClient } from "./sql-client";

/** Fences a version's runners without superseding it: it may take the lease again later. */
export async function fenceRunners(client: SqlClient, pipelineVersionId: string, why: string): Promise<void> {
  await client.query(
    `UPDATE checkpoints SET lease_epoch = lease_epoch + 1, lease_owner = $2 WHERE pipeline_version_id = $1`,
    [pipelineVersionId, why],
  );
}

/**
 * Readers of the pipeline's serving names switch from `from` (which must be serving) to `to`; `from`
 * is fenced. Locks the pipeline row first, so two switches of one pipeline run one after the other.
 */
export async function switchServing(
  client: SqlClient,
  move: { from: string; to: string; why: string },
): Promise<void> {
  const locked = await client.query<{ serving: string | null; same: boolean }>(
    `SELECT p.serving_version_id AS serving, (t.pipeline_id = p.id) AS same
       FROM pipeline_versions t JOIN pipeline_versions f ON f.id = $2 JOIN pipelines p ON p.id = f.pipeline_id
      WHERE t.id = $1 FOR UPDATE OF p`,
    [move.to, move.from],
  );
  const row = locked.rows[0];
  if (!row?.same)
    throw new ConfigurationError(`versions ${move.from} and ${move.to} are not of one pipeline`);
  if (row.serving !== move.from)
    throw new ConfigurationError(
      `the serving version changed meanwhile (it is ${row.serving ?? "none"}, not ${move.from}): nothing was switched`,
    );
  await fenceRunners(client, move.from, move.why);
  await serveVersion(client, move.to);
}

/** The state tables a version's rows live in (each keyed by pipeline_version_id). */
const STATE_TABLES = ["dedup_state", "window_state", "cdc_state", "join_versions", "join_held"] as const;

/**
 * A version that will never run again — an aborted candidate, or the side a promotion or rollback
 * stopped once its keeping time is over (docs/rollouts.md): superseded by `by` (the serving
 * version) and fenced, its state deleted and the physical tables no live version writes dropped (a
 * version continued in place shares its predecessor's table; the predecessor, superseded, does not
 * keep it). Refused for the serving version. Returns the dropped tables.
 */
export async function retireVersion(
  client: SqlClient,
  versions: { retired: string; by: string; why: string },
): Promise<string[]> {
  const serving = await client.query<{ serving: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pipelines WHERE serving_version_id = $1) AS serving`,
    [versions.retired],
  );
  if (serving.rows[0]?.serving)
    throw new ConfigurationError(`version ${versions.retired} serves: it cannot be retired`);
  await client.query(`UPDATE pipeline_versions SET superseded_by_id = $2 WHERE id = $1`, [
    versions.retired,
    versions.by,
  ]);
  await fenceRunners(client, versions.retired, versions.why);
  for (const table of STATE_TABLES)
    await client.query(`DELETE FROM ${table} WHERE pipeline_version_id = $1`, [versions.retired]);
  await client.query(
    `UPDATE checkpoints SET state_rows = 0, state_bytes = 0, outputs = '{}'::jsonb, dimension = '{}'::jsonb WHERE pipeline_version_id = $1`,
    [versions.retired],
  );
  const dropped: string[] = [];
  for (const physical of Object.values(await loadSinkTables(client, versions.retired))) {
    const shared = await client.query<{ shared: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pipeline_versions v, jsonb_each_text(v.sink_tables) e(key, value)
                       WHERE v.id <> $1 AND v.superseded_by_id IS NULL AND e.value = $2) AS shared`,
      [versions.retired, physical],
    );
    if (shared.rows[0]?.shared) continue;
    await client.query(`DROP TABLE IF EXISTS ${physicalSql(physical)}`);
    dropped.push(physical);
  }
  return dropped;
}
