// The sink table a new version writes, brought in line with its output columns when it continues the
// previous version on the same table (an approved schema change: @sluice/services apply-schema-change).
// The runner only checks an existing table (sink-table.ts ensureSinkTable), so without this a new
// optional field would make the new version fail to open its table. Only changes that keep every
// stored row valid are made: a new column is added nullable (existing rows have no value), a column
// the new version no longer writes, or now writes optionally, loses NOT NULL, and a number column may
// widen to numeric (exact) or double precision. Anything else is refused with what to do, never
// guessed. Identifiers are validated names (@sluice/pipeline-spec), quoted.
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

/** The changes one output's table needs (a spec with one sink, or one output's view). */
export function sinkTableChanges(before: TPipelineSpec, after: TPipelineSpec): SinkTableChanges | undefined {
  const table = after.sink?.postgres?.table;
  if (!table || table !== before.sink?.postgres?.table) return undefined;
  const quoted = quoteQualifiedName(table);
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

/** Apply the changes inside the caller's transaction; a table not created yet is left to the runner. */
/** Every output's table (the one sink's, or each output's), inside the caller's transaction. */
export async function migrateSinkTable(
  client: SqlClient,
  before: TPipelineSpec,
  after: TPipelineSpec,
): Promise<string[]> {
  const changes: string[] = [];
  for (const pair of outputPairs(before, after)) {
    if (!pair.from || !pair.to) continue;
    const plan = sinkTableChanges(pair.from.spec, pair.to.spec);
    if (!plan || plan.statements.length + plan.refusals.length === 0) continue;
    // No table yet: nothing is stored, and the runner creates it with the new columns.
    const exists = await client.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [
      quoteQualifiedName(plan.table),
    ]);
    if (!exists.rows[0]?.found) continue;
    if (plan.refusals.length > 0)
      throw new ConfigurationError(
        `the sink table ${plan.table} cannot follow the new version: ${plan.refusals.join("; ")}`,
      );
    for (const sql of plan.statements) await client.query(sql);
    changes.push(...(pair.to.name ? plan.changes.map((c) => `${plan.table}: ${c}`) : plan.changes));
  }
  return changes;
}
