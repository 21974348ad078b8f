// The sink table a new version writes, brought in line with its output columns when it continues the
// previous version on the same table (an approved schema change: @sluice/services apply-schema-change).
// The runner only checks an existing table (sink-table.ts ensureSinkTable), so without this a new
// optional field would make the new version fail to open its table. Only changes that keep every
// stored row valid are made: a new column is added nullable (existing rows have no value), a column
// the new version no longer writes, or now writes optionally, loses NOT NULL, and a number column may
// widen to numeric (exact) or double precision. Anything else is refused with what to do, never
// guessed. Identifiers are validated names (@sluice/pipeline-spec), quoted. The statements alter the
// version's physical table (physical-sink-table.ts); its serving view, which froze the old column
// list, is dropped before and created again after, in the same transaction (serving-views.ts).
import {
  outputColumns,
  outputPairs,
  postgresTypeFor,
  quoteIdentifier,
  quoteQualifiedName,
  type TPipelineSpec,
} from "@sluice/pipeline-spec";
import { ConfigurationError } from "../errors";
import type { SqlClient } from "./sql-client";
import { physicalSinkTable, physicalSql, servingName } from "./physical-sink-table";
import { createServingView, dropServingView, loadSinkTables } from "./serving-views";

const WIDENINGS: Record<string, string[]> = {
  bigint: ["numeric", "double precision"],
  integer: ["bigint", "numeric", "double precision"],
  "double precision": ["numeric"],
};

export interface SinkTableChanges {
  table: string;
  statements: string[];
  /** In words, for the request's result. */
  changes: string[];
  refusals: string[];
}

/**
 * The changes one output's table needs (a spec with one sink, or one output's view); `target` is the
 * quoted table the statements alter (default: the spec's name).
 */
export function sinkTableChanges(
  before: TPipelineSpec,
  after: TPipelineSpec,
  target?: string,
): SinkTableChanges | undefined {
  const table = after.sink?.postgres?.table;
  if (!table || table !== before.sink?.postgres?.table) return undefined;
  const quoted = target ?? quoteQualifiedName(table);
  const old = new Map(outputColumns(before).map((c) => [c.name, c]));
  const next = outputColumns(after);
  const statements: string[] = [];
  const changes: string[] = [];
  const refusals: string[] = [];
  for (const c of next) {
    const was = old.get(c.name);
    const type = postgresTypeFor(c.type);
    if (!was) {
      statements.push(`ALTER TABLE ${quoted} ADD COLUMN IF NOT EXISTS ${quoteIdentifier(c.name)} ${type}`);
      changes.push(`column ${c.name} (${type}) added, empty in the rows already there`);
      continue;
    }
    const wasType = postgresTypeFor(was.type);
    if (wasType !== type) {
      if (WIDENINGS[wasType]?.includes(type)) {
        statements.push(
          `ALTER TABLE ${quoted} ALTER COLUMN ${quoteIdentifier(c.name)} TYPE ${type} USING ${quoteIdentifier(c.name)}::${type}`,
        );
        changes.push(`column ${c.name} widened from ${wasType} to ${type}`);
      } else
        refusals.push(
          `column ${c.name} would change from ${wasType} to ${type}, which could change or lose values already stored: alter ${table} yourself, or write a new table`,
        );
    }
    if (c.optional && !was.optional) {
      statements.push(`ALTER TABLE ${quoted} ALTER COLUMN ${quoteIdentifier(c.name)} DROP NOT NULL`);
      changes.push(`column ${c.name} may now be empty`);
    }
  }
  const kept = new Set(next.map((c) => c.name));
  for (const c of old.values()) {
    if (kept.has(c.name) || c.optional) continue;
    statements.push(`ALTER TABLE ${quoted} ALTER COLUMN ${quoteIdentifier(c.name)} DROP NOT NULL`);
    changes.push(`column ${c.name} is no longer written (kept, now nullable)`);
  }
  return { table, statements, changes, refusals };
}

/**
 * Every output's physical table (the one sink's, or each output's) of `pipelineVersionId` — the new
 * version, which inherited them — brought in line with `after`, inside the caller's transaction; the
 * serving view of each table it changed is made again when that version serves.
 */
export async function migrateSinkTable(
  client: SqlClient,
  before: TPipelineSpec,
  after: TPipelineSpec,
  pipelineVersionId: string,
): Promise<string[]> {
  const changes: string[] = [];
  const tables = await loadSinkTables(client, pipelineVersionId);
  const serves = await client.query<{ serving: boolean; version: number }>(
    `SELECT EXISTS (SELECT 1 FROM pipelines WHERE serving_version_id = $1) AS serving,
            (SELECT version FROM pipeline_versions WHERE id = $1) AS version`,
    [pipelineVersionId],
  );
  const version = serves.rows[0]?.version;
  for (const pair of outputPairs(before, after)) {
    if (!pair.from || !pair.to) continue;
    const table = pair.to.spec.sink.postgres?.table;
    const physical = table ? tables[servingName(table)] : undefined;
    // A table named after this version was created by its registration, from `after`: nothing to
    // follow (its predecessor wrote no table of that name).
    if (!table || !physical || physical === physicalSinkTable(table, version ?? -1)) continue;
    const plan = sinkTableChanges(pair.from.spec, pair.to.spec, physicalSql(physical));
    if (!plan || plan.statements.length + plan.refusals.length === 0) continue;
    if (plan.refusals.length > 0)
      throw new ConfigurationError(
        `the sink table ${plan.table} cannot follow the new version: ${plan.refusals.join("; ")}`,
      );
    const viewed = serves.rows[0]?.serving === true;
    if (viewed) await dropServingView(client, servingName(table));
    for (const sql of plan.statements) await client.query(sql);
    if (viewed) await createServingView(client, servingName(table), physical);
    changes.push(...(pair.to.name ? plan.changes.map((c) => `${plan.table}: ${c}`) : plan.changes));
  }
  return changes;
}
