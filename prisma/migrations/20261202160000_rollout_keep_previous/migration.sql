-- The side a promotion (blue) or a rollback (green) stopped keeps its state and tables for a rollback
-- for keep_previous_hours after the decision, chosen when the rollout starts; then the workers retire
-- it (@sluice/services rollouts/retire-kept-versions.ts) and record when in previous_dropped_at.
ALTER TABLE "rollouts" ADD COLUMN "keep_previous_hours" INTEGER NOT NULL DEFAULT 168;
ALTER TABLE "rollouts" ADD COLUMN "previous_dropped_at" TIMESTAMPTZ(3);
ALTER TABLE "rollouts" ADD CONSTRAINT "rollouts_keep_previous_hours_check"
  CHECK ("keep_previous_hours" BETWEEN 1 AND 8760);
CREATE INDEX "rollouts_kept_idx" ON "rollouts"("decided_at")
  WHERE "state" IN ('promoted', 'rolled_back') AND "previous_dropped_at" IS NULL;
