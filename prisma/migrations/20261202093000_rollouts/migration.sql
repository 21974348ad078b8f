-- CreateTable
CREATE TABLE "rollouts" (
    "id" BIGSERIAL NOT NULL,
    "pipeline_id" TEXT NOT NULL,
    "blue_version_id" TEXT NOT NULL,
    "green_version_id" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'running',
    "starting_from" JSONB NOT NULL,
    "started_by_id" TEXT,
    "started_by" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "promotion_request_id" BIGINT,
    "decided_by" TEXT,
    "decided_at" TIMESTAMPTZ(3),
    "decision_reason" TEXT NOT NULL DEFAULT '',
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "rollouts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "rollouts_pipeline_id_started_at_idx" ON "rollouts"("pipeline_id", "started_at");

-- What a state means is decided by @sluice/services rollouts/ (docs/rollouts.md); only these, and one
-- running rollout per pipeline.
ALTER TABLE "rollouts" ADD CONSTRAINT "rollouts_state_check"
  CHECK ("state" IN ('running', 'promoted', 'rolled_back', 'aborted'));
CREATE UNIQUE INDEX "rollouts_one_running" ON "rollouts"("pipeline_id") WHERE "state" = 'running';
