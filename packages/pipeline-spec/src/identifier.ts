// Identifiers: every table, schema and column name that reaches SQL passes through here first.
// The pattern is deliberately narrower than what Postgres accepts, so a name that validates can be
// double-quoted without escaping and can never carry SQL (quotes, spaces, semicolons, comments).

/** Lowercase letters, digits and `_`, starting with a letter or `_`, at most 63 bytes (Postgres' limit). */
export const IDENTIFIER_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * User-chosen sink table names are shorter than Postgres' 63 bytes so that Sluice can derive shadow,
 * staging and per-version names (`<table>__green_v12`) without truncating them.
 */
export const MAX_TABLE_NAME_LENGTH = 48;

/** Postgres reserved key words (SQL:2016 and Postgres-reserved): legal only when quoted, a trap in ad-hoc SQL. */
export const POSTGRES_RESERVED_WORDS: ReadonlySet<string> = new Set(
  (
    "all analyse analyze and any array as asc asymmetric authorization binary both case cast check " +
    "collate collation column concurrently constraint create cross current_catalog current_date " +
    "current_role current_schema current_time current_timestamp current_user default deferrable desc " +
    "distinct do else end except false fetch for foreign freeze from full grant group having ilike " +
    "in initially inner intersect into is isnull join lateral leading left like limit localtime " +
    "localtimestamp natural not notnull null offset on only or order outer overlaps placing primary " +
    "references returning right select session_user similar some symmetric system_user table " +
    "tablesample then to trailing true union unique user using variadic verbose when where window " +
    "with"
  ).split(" "),
);

/** Words CEL reserves: a contract field with one of these names could not be used in an expression. */
export const CEL_RESERVED_WORDS: ReadonlySet<string> = new Set(
  (
    "true false null in as break const continue else for function if import let loop package " +
    "namespace return var void while"
  ).split(" "),
);

export type TIdentifierKind = "column" | "table" | "schema" | "identifier";

const RULE = "use lowercase letters, digits and _, starting with a letter or _, at most 63 characters";

/** Why `name` is not a usable identifier of this kind, or undefined when it is. Pattern and reserved words. */
export function identifierProblem(name: unknown, kind: TIdentifierKind = "identifier"): string | undefined {
  if (typeof name !== "string") return `a ${kind} name must be a string, got ${describe(name)}`;
  if (!IDENTIFIER_PATTERN.test(name)) {
    const why = /["'`;\s]|--|\/\*/.test(name)
      ? " (quotes, spaces, semicolons and comments are never allowed)"
      : "";
    return `${JSON.stringify(name)} is not a valid ${kind} name${why}: ${RULE}`;
  }
  if (POSTGRES_RESERVED_WORDS.has(name)) {
    return `${JSON.stringify(name)} is a reserved word in SQL: choose another ${kind} name (e.g. ${name}_id or ${name}_name)`;
  }
  if (kind === "schema" && (name.startsWith("pg_") || name === "information_schema")) {
    return `${JSON.stringify(name)} is a Postgres system schema: choose your own schema name`;
  }
  return undefined;
}

/** Why `name` is not a usable sink table name (`table` or `schema.table`), or undefined. */
export function tableNameProblem(name: unknown): string | undefined {
  if (typeof name !== "string") return `a table name must be a string, got ${describe(name)}`;
  const parts = name.split(".");
  if (parts.length > 2) return `${JSON.stringify(name)} is not a valid table name: use table or schema.table`;
  const [schema, table] = parts.length === 2 ? parts : [undefined, parts[0]];
  if (schema !== undefined) {
    const problem = identifierProblem(schema, "schema");
    if (problem) return `${problem} (in table name ${JSON.stringify(name)})`;
  }
  const problem = identifierProblem(table, "table");
  if (problem) return problem;
  if ((table ?? "").length > MAX_TABLE_NAME_LENGTH) {
    return `${JSON.stringify(table)} is too long for a table name: at most ${MAX_TABLE_NAME_LENGTH} characters, so Sluice can derive shadow-table names from it`;
  }
  return undefined;
}

/** Thrown when a name that is about to reach SQL is not a valid identifier. A programming error, never retriable. */
export class InvalidIdentifierError extends Error {
  override readonly name = "InvalidIdentifierError";
}

/**
 * Asserts the identifier pattern only (not reserved words: the engine's own quoted names such as
 * `window_start` or `_rescued` must pass). Reserved words are rejected earlier, when a spec is validated.
 */
export function assertIdentifier(name: unknown, what = "identifier"): asserts name is string {
  if (typeof name !== "string" || !IDENTIFIER_PATTERN.test(name)) {
    throw new InvalidIdentifierError(`${what} ${describe(name)} is not a valid identifier: ${RULE}`);
  }
}

/** `amount` → `"amount"`. Validates first: the result is safe to place in SQL text. */
export function quoteIdentifier(name: string): string {
  assertIdentifier(name);
  return `"${name}"`;
}

/** `ledger.payments` → `"ledger"."payments"`, `payments` → `"payments"`. */
export function quoteQualifiedName(name: string): string {
  const parts = name.split(".");
  if (parts.length > 2)
    throw new InvalidIdentifierError(
      `${JSON.stringify(name)} is not a valid qualified name: use name or schema.name`,
    );
  return parts.map((part) => quoteIdentifier(part)).join(".");
}

/** Splits `schema.table` into its parts; `schema` is undefined for an unqualified name. */
export function splitQualifiedName(name: string): { schema: string | undefined; table: string } {
  const dot = name.indexOf(".");
  return dot < 0
    ? { schema: undefined, table: name }
    : { schema: name.slice(0, dot), table: name.slice(dot + 1) };
}

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : value === null ? "null" : typeof value;
}
