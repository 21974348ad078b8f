-- AlterTable
ALTER TABLE "cdc_state" ADD COLUMN     "event_time" TIMESTAMPTZ(3),
ADD COLUMN     "evict_after" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "cdc_state_pipeline_version_id_evict_after_idx" ON "cdc_state"("pipeline_version_id", "evict_after");

