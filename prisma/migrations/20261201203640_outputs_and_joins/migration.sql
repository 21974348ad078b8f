-- DropIndex
DROP INDEX "dead_letters_pipeline_version_id_partition_offset_key";

-- DropIndex
DROP INDEX "window_state_pipeline_version_id_window_end_idx";

-- DropIndex
DROP INDEX "cdc_state_pipeline_version_id_evict_after_idx";

-- AlterTable
ALTER TABLE "checkpoints" ADD COLUMN     "dimension" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "outputs" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "window_state" DROP CONSTRAINT "window_state_pkey",
ADD COLUMN     "output" TEXT NOT NULL DEFAULT '',
ADD CONSTRAINT "window_state_pkey" PRIMARY KEY ("pipeline_version_id", "output", "group_key", "window_start");

-- AlterTable
ALTER TABLE "cdc_state" DROP CONSTRAINT "cdc_state_pkey",
ADD COLUMN     "output" TEXT NOT NULL DEFAULT '',
ADD CONSTRAINT "cdc_state_pkey" PRIMARY KEY ("pipeline_version_id", "output", "entity_key", "sequence");

-- CreateTable
CREATE TABLE "join_versions" (
    "pipeline_version_id" TEXT NOT NULL,
    "entity_key" TEXT NOT NULL,
    "valid_from" TIMESTAMPTZ(3) NOT NULL,
    "sequence" JSONB,
    "deleted" BOOLEAN NOT NULL,
    "values" JSONB NOT NULL,
    "bytes" INTEGER NOT NULL,

    CONSTRAINT "join_versions_pkey" PRIMARY KEY ("pipeline_version_id","entity_key","valid_from")
);

-- CreateTable
CREATE TABLE "join_held" (
    "pipeline_version_id" TEXT NOT NULL,
    "partition" INTEGER NOT NULL,
    "offset" BIGINT NOT NULL,
    "entity_key" TEXT NOT NULL,
    "event_time" TIMESTAMPTZ(3) NOT NULL,
    "row" JSONB NOT NULL,
    "raw" BYTEA NOT NULL,
    "bytes" INTEGER NOT NULL,
    "held_batch_id" BIGINT NOT NULL,

    CONSTRAINT "join_held_pkey" PRIMARY KEY ("pipeline_version_id","partition","offset")
);

-- CreateIndex
CREATE INDEX "join_held_pipeline_version_id_event_time_idx" ON "join_held"("pipeline_version_id", "event_time");

-- CreateIndex
CREATE UNIQUE INDEX "dead_letters_pipeline_version_id_topic_partition_offset_key" ON "dead_letters"("pipeline_version_id", "topic", "partition", "offset");

-- CreateIndex
CREATE INDEX "window_state_pipeline_version_id_output_window_end_idx" ON "window_state"("pipeline_version_id", "output", "window_end");

-- CreateIndex
CREATE INDEX "cdc_state_pipeline_version_id_output_evict_after_idx" ON "cdc_state"("pipeline_version_id", "output", "evict_after");

