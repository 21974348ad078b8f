// The contract: the schema at the pipeline's boundary. Field types are few and map one-to-one onto
// Postgres column types and CEL types, so the sink table and the expressions agree with the contract.
import { z } from "zod";
import { CEL_RESERVED_WORDS, identifierProblem } from "./identifier";

export const FIELD_TYPES = ["string", "int", "decimal", "double", "boolean", "timestamp", "json"] as const;
export type TFieldType = (typeof FIELD_TYPES)[number];

export interface TFieldSpec {
  type: TFieldType;
  optional: boolean;
}

export interface TColumn extends TFieldSpec {
  name: string;
}

const FIELD_TYPE_TEXT = new RegExp(`^(${FIELD_TYPES.join("|")})(\\?)?$`);
const FIELD_TYPE_HINT = `use one of ${FIELD_TYPES.join(", ")}; add ? for an optional field (e.g. string?)`;

/** `"decimal"` → required decimal; `"string?"` → optional string. */
const ZFieldTypeText = z.string().transform((text, ctx): TFieldSpec => {
  const match = FIELD_TYPE_TEXT.exec(text.trim());
  if (!match) {
    ctx.issues.push({
      code: "custom",
      input: text,
      message: `${JSON.stringify(text)} is not a field type: ${FIELD_TYPE_HINT}`,
    });
    return z.NEVER;
  }
  return { type: match[1] as TFieldType, optional: match[2] === "?" };
});

/** The long form, `{ type: string, optional: true }`; also the canonical form. */
const ZFieldObject = z.strictObject({
  type: z.enum(FIELD_TYPES, { error: `not a field type: ${FIELD_TYPE_HINT}` }),
  optional: z.boolean().default(false),
});

export const ZFieldSpec = z.union([ZFieldTypeText, ZFieldObject]);

/** Why `name` cannot be a contract field name, or undefined. Field names become columns and CEL variables. */
export function fieldNameProblem(name: string): string | undefined {
  const problem = identifierProblem(name, "column");
  if (problem) return problem;
  if (name.startsWith("_")) {
    return `${JSON.stringify(name)} starts with _, which is reserved for Sluice's own columns (such as _rescued): rename the field`;
  }
  if (CEL_RESERVED_WORDS.has(name)) {
    return `${JSON.stringify(name)} is a reserved word in expressions: rename the field`;
  }
  return undefined;
}

export const ZContract = z.strictObject({
  fields: z.record(z.string(), ZFieldSpec).superRefine((fields, ctx) => {
    const names = Object.keys(fields);
    if (names.length === 0)
      ctx.addIssue({ code: "custom", message: "a contract needs at least one field, e.g. event_id: string" });
    for (const name of names) {
      const problem = fieldNameProblem(name);
      if (problem) ctx.addIssue({ code: "custom", path: [name], message: problem });
    }
  }),
  /** rescue: keep the row, unknown fields go to `_rescued`; quarantine: row to quarantine; reject: row to dead letters. */
  onUnknownField: z.enum(["rescue", "quarantine", "reject"]).default("rescue"),
  /** quarantine: row to quarantine (replayable after a fix); reject: row to dead letters. */
  onTypeMismatch: z.enum(["quarantine", "reject"]).default("quarantine"),
});

export type TContract = z.output<typeof ZContract>;
export type TContractInput = z.input<typeof ZContract>;

/**
 * The contract's fields as columns, ordered by name. Name order (not declaration order) because a spec
 * stored as jsonb comes back with its keys reordered: the table layout must not depend on storage.
 */
export function contractColumns(spec: { contract: Pick<TContract, "fields"> }): TColumn[] {
  return Object.entries(spec.contract.fields)
    .map(([name, field]) => ({ name, type: field.type, optional: field.optional }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const POSTGRES_TYPES: Record<TFieldType, string> = {
  string: "text",
  int: "bigint",
  decimal: "numeric",
  double: "double precision",
  boolean: "boolean",
  timestamp: "timestamptz",
  json: "jsonb",
};

/** The Postgres column type for a contract type: string→text, int→bigint, decimal→numeric, ... */
export function postgresTypeFor(type: TFieldType): string {
  return POSTGRES_TYPES[type];
}

export const NUMERIC_TYPES: ReadonlySet<TFieldType> = new Set(["int", "decimal", "double"]);
export const ORDERED_TYPES: ReadonlySet<TFieldType> = new Set([
  "int",
  "decimal",
  "double",
  "timestamp",
  "string",
]);
