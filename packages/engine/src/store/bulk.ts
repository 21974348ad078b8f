// Bulk writes: one INSERT ... SELECT FROM unnest($1::type[], $2::type[], ...) per table per batch.
// One round trip and a fixed number of parameters however many rows — no per-row statements.

/** Converts a JS value for a Postgres array parameter of the given SQL type. */
export function toSqlValue(value: unknown, sqlType: string): unknown {
  if (value === null || value === undefined) return null;
  if (sqlType === "jsonb") return JSON.stringify(value);
  if (value instanceof Date) return value.toISOString();
  return value;
}

export interface UnnestColumn {
  name: string;
  sqlType: string;
  values: unknown[];
}

/** `SELECT * FROM unnest($1::t1[], ...)` and its parameters, numbered from `firstParam`. */
export function unnestSelect(columns: UnnestColumn[], firstParam = 1): { sql: string; params: unknown[] } {
  const casts = columns.map((c, i) => `$${firstParam + i}::${c.sqlType}[]`);
  return { sql: `SELECT * FROM unnest(${casts.join(", ")})`, params: columns.map((c) => c.values.map((v) => toSqlValue(v, c.sqlType))) };
}
