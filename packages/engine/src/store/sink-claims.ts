// A sink table belongs to one pipeline (issue 19, item 5): the first pipeline registered writing it
// claims it (`sink_claims`), and every other pipeline naming it is refused — at registration, inside
// its transaction, and in the console's draft check — with the owner team's name. A table that exists
// but no pipeline claims is never a sink either: Sluice creates its sink tables itself, and the tables
// that exist without a claim are the control plane's own (sessions, team_members, …) or someone
// else's. Names are compared as Postgres resolves them: an unqualified name is in `public`.
// The claim is checked again in every batch's commit transaction (assertSinkClaims, before anything is
// written), so a version whose table changed hands after it registered writes nothing into it.
import {
  quoteQualifiedName,
  sinkTables,
  splitQualifiedName,
  type TPipelineSpec,
} from "@sluice/pipeline-spec";
import { ConfigurationError } from "../errors";
import type { SqlClient } from "./sql-client";
import { SINK_SCHEMA } from "./physical-sink-table";

/** Registration refused: the spec writes a table another pipeline owns, or one Sluice did not create. */
export class SinkClaimError extends ConfigurationError {}

/** "schema.table" as stored in sink_claims. */
export function claimName(table: string): string {
  const { schema, table: name } = splitQualifiedName(table);
  return `${schema ?? "public"}.${name}`;
}

/** The claim names of every table the spec writes (its sink and each output's), once each. */
export function claimNames(spec: TPipelineSpec): string[] {
  return [...new Set(sinkTables(spec).map((t) => claimName(t.table)))];
}

/**
 * Inside a batch's commit transaction, before its writes: every table the version writes (`tables`,
 * claim names) is claimed by the version's pipeline, or SinkClaimError says which is whose and nothing
 * of the batch is written. The claim rows are share-locked until the commit, so none changes hands
 * while the batch writes.
 */
export async function assertSinkClaims(
  client: SqlClient,
  pipelineVersionId: string,
  tables: readonly string[],
): Promise<void> {
  if (tables.length === 0) return;
  const held = await client.query<{ table_name: string }>(
    `SELECT c.table_name FROM sink_claims c JOIN pipeline_versions v ON v.pipeline_id = c.pipeline_id
      WHERE v.id = $1 AND c.table_name = ANY($2::text[]) FOR SHARE OF c`,
    [pipelineVersionId, tables],
  );
  if (held.rows.length === tables.length) return;
  const ours = new Set(held.rows.map((r) => r.table_name));
  const who = await client.query<{ table_name: string; pipeline: string | null; team: string | null }>(
    `SELECT n.table_name, p.name AS pipeline, t.name AS team FROM unnest($1::text[]) AS n(table_name)
       LEFT JOIN sink_claims c ON c.table_name = n.table_name
       LEFT JOIN pipelines p ON p.id = c.pipeline_id LEFT JOIN teams t ON t.id = p.owner_team_id`,
    [tables.filter((t) => !ours.has(t))],
  );
  const me = await client.query<{ pipeline: string; version: number }>(
    `SELECT p.name AS pipeline, v.version FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE v.id = $1`,
    [pipelineVersionId],
  );
  const self = me.rows[0] ? `${me.rows[0].pipeline} v${me.rows[0].version}` : pipelineVersionId;
  const refusals = who.rows.map((r) =>
    r.pipeline
      ? `sink table ${r.table_name} belongs to pipeline ${r.pipeline} of team ${r.team}`
      : `sink table ${r.table_name} is claimed by no pipeline any more`,
  );
  throw new SinkClaimError(
    `${self}: batch not committed, nothing written: ${refusals.join("; ")}. A sink table is written only by the pipeline that claims it (sink_claims): register a version of ${me.rows[0]?.pipeline ?? "this pipeline"} writing a table of its own, or have an admin give the claim back`,
  );
}

/** Why this spec may not write each of its tables (empty: it may write all of them). Reads only. */
export async function sinkClaimRefusals(client: SqlClient, spec: TPipelineSpec): Promise<string[]> {
  const tables = [...new Set(sinkTables(spec).map((t) => t.table))];
  const refusals: string[] = [];
  for (const table of tables) {
    if (claimName(table).startsWith(`${SINK_SCHEMA}.`)) {
      refusals.push(
        `${table} is in ${SINK_SCHEMA}, where Sluice keeps each version's physical tables: name the table readers query (its serving name), in another schema`,
      );
      continue;
    }
    const owner = await client.query<{ pipeline: string; team: string }>(
      `SELECT p.name AS pipeline, t.name AS team FROM sink_claims c JOIN pipelines p ON p.id = c.pipeline_id
         JOIN teams t ON t.id = p.owner_team_id WHERE c.table_name = $1`,
      [claimName(table)],
    );
    const o = owner.rows[0];
    if (o) {
      if (o.pipeline !== spec.name)
        refusals.push(
          `sink table ${table} belongs to pipeline ${o.pipeline} of team ${o.team}: a sink table is written by one pipeline only — choose another table name`,
        );
      continue;
    }
    const exists = await client.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [
      quoteQualifiedName(table),
    ]);
    if (exists.rows[0]?.found)
      refusals.push(
        `${table} is an existing table no pipeline owns (Sluice's own tables, or someone else's): a sink table is one Sluice creates for its pipeline — choose a new table name`,
      );
  }
  return refusals;
}

/**
 * Inside the registration's transaction: claims the spec's tables for its pipeline, or throws
 * SinkClaimError with every refusal. Two registrations claiming one new table at once: the second waits
 * on the first's row and then finds it taken.
 */
export async function claimSinkTables(
  client: SqlClient,
  spec: TPipelineSpec,
  pipelineId: string,
): Promise<void> {
  const refusals = await sinkClaimRefusals(client, spec);
  if (refusals.length > 0) throw new SinkClaimError(`${spec.name}: ${refusals.join("; ")}`);
  for (const { table } of sinkTables(spec)) {
    await client.query(
      `INSERT INTO sink_claims (table_name, pipeline_id) VALUES ($1, $2) ON CONFLICT (table_name) DO NOTHING`,
      [claimName(table), pipelineId],
    );
    const owner = await client.query<{ pipeline_id: string }>(
      `SELECT pipeline_id FROM sink_claims WHERE table_name = $1`,
      [claimName(table)],
    );
    if (owner.rows[0]?.pipeline_id !== pipelineId) {
      const again = await sinkClaimRefusals(client, spec);
      throw new SinkClaimError(
        `${spec.name}: ${again.join("; ") || `sink table ${table} was claimed meanwhile`}`,
      );
    }
  }
}
