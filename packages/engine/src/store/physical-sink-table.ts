// Where a version's sink rows physically live, and the one rule that names those tables (issue 20,
// and issue 19 item 5's "sinks apart from the control plane"). Readers query the *serving name* — the
// table name in the spec, e.g. `merchant_settlements` in public — which is a view over the serving
// version's *physical* table in the sinks schema (serving-views.ts). Each version that starts with
// fresh state writes tables of its own, so a candidate (green) never writes blue's rows; a version
// that continues state in place inherits its predecessor's tables (pipeline_versions.sink_tables).
//
// Physical name: the spec's table without "public." and with "@v<version that created it>", e.g.
// sluice_sinks."merchant_settlements@v1", sluice_sinks."finance.ledger@v3". Spec identifiers are
// lowercase snake_case, so the "@" and the dot keep two specs' tables apart; a name longer than
// Postgres's 63 bytes is cut and given a hash of the whole (the "#", which no spec name contains,
// keeps a cut name apart from an uncut one). The migration that moved existing sinks
// (prisma/migrations/…_serving_views) applies the same rule in SQL.
import { createHash } from "node:crypto";
import { splitQualifiedName } from "@sluice/pipeline-spec";

/** The schema every physical sink table lives in; a spec may not name it. */
export const SINK_SCHEMA = "sluice_sinks";

const MAX_IDENTIFIER = 63;

/** "schema.table" as Postgres resolves the spec's name (unqualified: public) — the serving name, as sink_claims stores it. */
export function servingName(table: string): string {
  const { schema, table: name } = splitQualifiedName(table);
  return `${schema ?? "public"}.${name}`;
}

/** The physical table (its name inside SINK_SCHEMA) that `version` creates for the spec's `table`. */
export function physicalSinkTable(table: string, version: number): string {
  const serving = servingName(table);
  const base = serving.startsWith("public.") ? serving.slice("public.".length) : serving;
  const suffix = `@v${version}`;
  if (Buffer.byteLength(base + suffix) <= MAX_IDENTIFIER) return base + suffix;
  const hash = createHash("sha256").update(serving).digest("hex").slice(0, 8);
  return `${base.slice(0, MAX_IDENTIFIER - suffix.length - hash.length - 1)}#${hash}${suffix}`;
}

/** A physical table's name, quoted and schema-qualified for SQL (names come from physicalSinkTable only). */
export function physicalSql(physical: string): string {
  if (!/^[a-z0-9_.#@]+$/.test(physical) || physical.length > MAX_IDENTIFIER)
    throw new Error(`${JSON.stringify(physical)} is not a physical sink table name`);
  return `"${SINK_SCHEMA}"."${physical}"`;
}

/** The serving name → physical table map of one version, as stored in pipeline_versions.sink_tables. */
export type SinkTableMap = Record<string, string>;
