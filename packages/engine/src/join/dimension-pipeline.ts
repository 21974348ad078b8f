// A join whose dimension is another Sluice pipeline (`join.dimension.pipeline`): finding that
// pipeline's serving version — its committed SCD2 table — and checking, when the joining pipeline is
// registered, that it can be one: it exists, its team is the joining pipeline's (a join reads its
// table), its result is SCD2 history sequenced by its own event time (so valid_from is an instant and its
// watermark says which versions are final), and its table has the key and the fields the join
// declares, with their types. Every refusal says which and how to fix it.
import {
  isPipelineDimension,
  joinedContract,
  outputColumns,
  validateSpec,
  type TPipelineDimension,
  type TPipelineSpec,
} from "@sluice/pipeline-spec";
import { ConfigurationError } from "../errors";
import { physicalSql, servingName } from "../store/physical-sink-table";
import { loadSinkTables } from "../store/serving-views";
import type { SqlClient } from "../store/sql-client";

/** The joining spec cannot use the pipeline it names as its dimension. */
export class DimensionPipelineError extends ConfigurationError {}

/** Key types matched in SQL by their text (a string, an int): the others' text forms differ between Postgres and JSON. */
const KEY_TYPES = new Set(["string", "int"]);

export interface ServingDimension {
  pipelineId: string;
  ownerTeamId: string;
  /** The serving version: its checkpoint's watermark is the dimension's. */
  versionId: string;
  spec: TPipelineSpec;
  /** Its SCD2 table, quoted for SQL (physical-sink-table.ts's one naming rule). */
  tableSql: string;
}

/** The dimension pipeline's serving version and table; undefined when no pipeline has that name. */
export async function findServingDimension(
  db: SqlClient,
  dim: TPipelineDimension,
): Promise<ServingDimension | undefined> {
  const res = await db.query<{ id: string; owner_team_id: string; version_id: string | null; spec: unknown }>(
    `SELECT p.id, p.owner_team_id, p.serving_version_id AS version_id, v.spec
       FROM pipelines p LEFT JOIN pipeline_versions v ON v.id = p.serving_version_id WHERE p.name = $1`,
    [dim.pipeline],
  );
  const row = res.rows[0];
  if (!row) return undefined;
  if (!row.version_id)
    throw new DimensionPipelineError(
      `pipeline ${dim.pipeline} has no serving version: it has nothing to join yet`,
    );
  const checked = validateSpec(row.spec);
  if (!checked.ok)
    throw new DimensionPipelineError(`the serving spec of pipeline ${dim.pipeline} no longer validates`);
  const spec = checked.spec;
  const table = spec.sink?.postgres?.table;
  const physical = table ? (await loadSinkTables(db, row.version_id))[servingName(table)] : undefined;
  return {
    pipelineId: row.id,
    ownerTeamId: row.owner_team_id,
    versionId: row.version_id,
    spec,
    tableSql: physical ? physicalSql(physical) : "",
  };
}

/**
 * Whether `spec`'s join can use the pipeline it names: that pipeline's id, or why not (a sentence
 * naming both pipelines). Undefined for a spec without a pipeline dimension. Read-only: `draft.check`
 * asks it before registering, registration in its transaction (checkDimensionPipeline).
 */
export async function judgeDimensionPipeline(
  db: SqlClient,
  spec: TPipelineSpec,
): Promise<{ pipelineId: string } | { refusal: string } | undefined> {
  const dim = spec.join?.dimension;
  if (!dim || !isPipelineDimension(dim)) return undefined;
  const refuse = (why: string) => ({
    refusal: `${spec.name}: join.dimension.pipeline ${dim.pipeline}: ${why}`,
  });
  const found = await findServingDimension(db, dim);
  if (!found)
    return refuse(
      "no pipeline of that name is registered: register the dimension's pipeline first (a CDC pipeline with scdType: 2)",
    );
  const team = await db.query<{ slug: string }>(`SELECT slug FROM teams WHERE id = $1`, [found.ownerTeamId]);
  const owner = team.rows[0]?.slug;
  if (owner !== spec.owner)
    return refuse(
      `it belongs to team ${owner ?? "another team"}, and ${spec.name} to ${spec.owner}: a join reads its dimension pipeline's table, so both must be owned by the same team`,
    );
  const problems = dimensionShapeProblems(dim, found.spec);
  if (problems.length > 0) return refuse(problems.join("; "));
  return { pipelineId: found.pipelineId };
}

/**
 * Inside the registration's transaction (register-version.ts): throws DimensionPipelineError when
 * `spec`'s join names a pipeline it cannot use; that pipeline's id when it can.
 */
export async function checkDimensionPipeline(
  db: SqlClient,
  spec: TPipelineSpec,
): Promise<string | undefined> {
  const judged = await judgeDimensionPipeline(db, spec);
  if (judged && "refusal" in judged) throw new DimensionPipelineError(judged.refusal);
  return judged?.pipelineId;
}

/** Why `other` cannot be this dimension (pure): not SCD2 history by event time, or not the columns declared. */
export function dimensionShapeProblems(dim: TPipelineDimension, other: TPipelineSpec): string[] {
  const cdc = other.cdc;
  if (!cdc || cdc.scdType !== 2 || !other.sink?.postgres)
    return [
      "it does not keep SCD2 history: a dimension pipeline applies changes (cdc with scdType: 2) into a postgres sink",
    ];
  const time = other.eventTime?.column;
  if (cdc.sequenceBy !== time)
    return [
      `its history is sequenced by ${cdc.sequenceBy}${time ? `, not by its event time ${time}` : " and it has no eventTime"}: valid_from must be the instant a version starts and its watermark a time of it, so its cdc.sequenceBy must be its eventTime column`,
    ];
  const problems: string[] = [];
  const sameKey = dim.key.length === cdc.key.length && dim.key.every((k) => cdc.key.includes(k));
  if (!sameKey)
    problems.push(
      `join.dimension.key [${dim.key.join(", ")}] must be its cdc.key [${cdc.key.join(", ")}]: its history is kept per that key`,
    );
  const columns = new Map(
    outputColumns({ contract: joinedContract(other), cdc }).map((c) => [c.name, c] as const),
  );
  for (const [name, field] of Object.entries(dim.contract.fields)) {
    const column = columns.get(name);
    if (!column)
      problems.push(
        `its table has no column ${name} (it has ${[...columns.keys()].join(", ")}): join.dimension.contract.fields may only list those`,
      );
    else if (column.type !== field.type)
      problems.push(
        `${name} is ${column.type} in its table, not ${field.type}: declare ${name}: ${column.type}`,
      );
  }
  for (const k of dim.key)
    if (!KEY_TYPES.has(dim.contract.fields[k]?.type ?? ""))
      problems.push(`key field ${k} must be a string or int to be matched with the rows' ${k}`);
  return problems;
}
