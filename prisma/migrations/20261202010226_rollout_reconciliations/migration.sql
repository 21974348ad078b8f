-- CreateTable
CREATE TABLE "rollout_reconciliations" (
    "id" BIGSERIAL NOT NULL,
    "blue_version_id" TEXT NOT NULL,
    "green_version_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "only_blue" BIGINT,
    "only_green" BIGINT,
    "differing" BIGINT,
    "report" JSONB,
    "error" TEXT,
    "requested_by_id" TEXT,
    "requested_by" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3) NOT NULL,
    "duration_ms" INTEGER NOT NULL,

    CONSTRAINT "rollout_reconciliations_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "rollout_reconciliations_blue_version_id_green_version_id_st_idx" ON "rollout_reconciliations"("blue_version_id", "green_version_id", "started_at" DESC);

-- What a status means is decided by @sluice/services rollouts/ (reconciliation-report.ts); only these.
ALTER TABLE "rollout_reconciliations" ADD CONSTRAINT "rollout_reconciliations_status_check"
  CHECK ("status" IN ('compared', 'not_comparable', 'waiting', 'failed'));
