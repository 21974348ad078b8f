// Every pipeline has one rule of each pipeline kind, and the fleet one of each fleet kind, with the
// defaults of rule-kinds.ts. Run by the evaluator before every tick (one INSERT … ON CONFLICT DO
// NOTHING), so a pipeline registered by any path — the CLI, the console, the demo seed, a test —
// gets its rules before it is first evaluated, and pipelines that existed before alerts did are
// backfilled. Rules are tuned or disabled, never deleted, so this never brings back a removed one.
import type { PrismaClient } from "@sluice/db";
import { FLEET_RULE_KINDS, PIPELINE_RULE_KINDS, RULE_KIND_INFO } from "./rule-kinds";

export async function ensureDefaultRules(db: PrismaClient): Promise<number> {
  const kinds = PIPELINE_RULE_KINDS.map((k) => ({ kind: k, ...RULE_KIND_INFO[k].defaults }));
  const fleet = FLEET_RULE_KINDS.map((k) => ({ kind: k, ...RULE_KIND_INFO[k].defaults }));
  const defaults = JSON.stringify(kinds);
  const perPipeline = await db.$executeRaw`
    INSERT INTO alert_rules (id, pipeline_id, kind, severity, threshold, for_seconds, clear_for_seconds)
    SELECT 'ar_' || md5(p.id || ':' || d.kind), p.id, d.kind, d.severity, d.threshold, d."forSeconds", d."clearForSeconds"
      FROM pipelines p
     CROSS JOIN jsonb_to_recordset(${defaults}::jsonb) AS d(kind text, severity text, threshold float8, "forSeconds" int, "clearForSeconds" int)
    ON CONFLICT DO NOTHING`;
  const fleetRules = await db.$executeRaw`
    INSERT INTO alert_rules (id, pipeline_id, kind, severity, threshold, for_seconds, clear_for_seconds)
    SELECT 'ar_fleet_' || d.kind, NULL, d.kind, d.severity, d.threshold, d."forSeconds", d."clearForSeconds"
      FROM jsonb_to_recordset(${JSON.stringify(fleet)}::jsonb) AS d(kind text, severity text, threshold float8, "forSeconds" int, "clearForSeconds" int)
    ON CONFLICT DO NOTHING`;
  return perPipeline + fleetRules;
}
