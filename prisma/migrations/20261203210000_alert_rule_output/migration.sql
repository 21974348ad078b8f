-- An alert rule may watch one output of a pipeline with several outputs (docs/alerting/README.md): late
-- rows, violations and state differ per output (a row late for a 20-minute view may be on time for a
-- 2-day one). `output` names it; null is the pipeline as a whole, as every rule was. A pipeline keeps
-- one rule per kind and output: NULLS NOT DISTINCT, so the default (output-less) rules stay one per
-- kind and ensureDefaultRules' ON CONFLICT still holds.
ALTER TABLE "alert_rules" ADD COLUMN "output" TEXT;

DROP INDEX "alert_rules_pipeline_id_kind_key";
CREATE UNIQUE INDEX "alert_rules_pipeline_id_kind_output_key" ON "alert_rules"("pipeline_id", "kind", "output") NULLS NOT DISTINCT;
