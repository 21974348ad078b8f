// Every pipeline has one rule of each pipeline kind, and the fleet one of each fleet kind, with the
// defaults of rule-kinds.ts. Run by the evaluator before every tick (one INSERT … ON CONFLICT DO
// NOTHING), so a pipeline registered by any path — the CLI, the console, the demo seed, a test —
// gets its rules before it is first evaluated, and pipelines that existed before alerts did are
// backfilled. Rules are tuned or disabled, never deleted, so this never brings back a removed one.
import { countOf, sql, tables, type PrismaClient } from "@sluice/db";
import { FLEET_RULE_KINDS, PIPELINE_RULE_KINDS, RULE_KIND_INFO } from "./rule-kinds";

type TDefaultRule = {
  kind: string;
  severity: string;
  threshold: number | null;
  forSeconds: number;
  clearForSeconds: number;
};

/** The defaults as a table `d`, one row per kind. */
const defaultsTable = (rules: TDefaultRule[]) =>
  sql<TDefaultRule>`jsonb_to_recordset(${JSON.stringify(rules)}::jsonb)`.as<"d">(
    sql`d(kind text, severity text, threshold float8, "forSeconds" int, "clearForSeconds" int)`,
  );

const RULE_COLUMNS = [
  "id",
  "pipeline_id",
  "kind",
  "severity",
  "threshold",
  "for_seconds",
  "clear_for_seconds",
] as const;

export async function ensureDefaultRules(db: PrismaClient): Promise<number> {
  const kinds = PIPELINE_RULE_KINDS.map((k) => ({ kind: k, ...RULE_KIND_INFO[k].defaults }));
  const fleet = FLEET_RULE_KINDS.map((k) => ({ kind: k, ...RULE_KIND_INFO[k].defaults }));
  const perPipeline = await countOf(
    db,
    tables
      .insertInto("alert_rules")
      .columns(RULE_COLUMNS)
      .expression(
        tables
          .selectFrom("pipelines as p")
          .crossJoin(defaultsTable(kinds))
          .select([
            sql<string>`'ar_' || md5(p.id || ':' || d.kind)`.as("id"),
            "p.id",
            "d.kind",
            "d.severity",
            "d.threshold",
            "d.forSeconds",
            "d.clearForSeconds",
          ]),
      )
      .onConflict((oc) => oc.doNothing()),
  );
  const fleetRules = await countOf(
    db,
    tables
      .insertInto("alert_rules")
      .columns(RULE_COLUMNS)
      .expression(
        tables
          .selectFrom(defaultsTable(fleet))
          .select([
            sql<string>`'ar_fleet_' || d.kind`.as("id"),
            sql<null>`NULL`.as("pipeline_id"),
            "d.kind",
            "d.severity",
            "d.threshold",
            "d.forSeconds",
            "d.clearForSeconds",
          ]),
      )
      .onConflict((oc) => oc.doNothing()),
  );
  return perPipeline + fleetRules;
}
