-- CreateTable
CREATE TABLE "checkpoints" (
    "pipeline_version_id" TEXT NOT NULL,
    "last_batch_id" BIGINT NOT NULL DEFAULT -1,
    "end_offsets" JSONB NOT NULL DEFAULT '{}',
    "event_time_max" JSONB NOT NULL DEFAULT '{}',
    "watermark" TIMESTAMPTZ(3),
    "state_rows" BIGINT NOT NULL DEFAULT 0,
    "state_bytes" BIGINT NOT NULL DEFAULT 0,
    "lease_epoch" BIGINT NOT NULL DEFAULT 0,
    "lease_owner" TEXT,
    "lease_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "checkpoints_pkey" PRIMARY KEY ("pipeline_version_id")
);

-- CreateTable
CREATE TABLE "offset_log" (
    "pipeline_version_id" TEXT NOT NULL,
    "batch_id" BIGINT NOT NULL,
    "ranges" JSONB NOT NULL,
    "planned_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "offset_log_pkey" PRIMARY KEY ("pipeline_version_id","batch_id")
);

-- CreateTable
CREATE TABLE "batch_log" (
    "pipeline_version_id" TEXT NOT NULL,
    "batch_id" BIGINT NOT NULL,
    "committed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "input_rows" INTEGER NOT NULL,
    "sink_rows" INTEGER NOT NULL,
    "outcomes" JSONB NOT NULL,
    "progress" JSONB NOT NULL,

    CONSTRAINT "batch_log_pkey" PRIMARY KEY ("pipeline_version_id","batch_id")
);

-- CreateTable
CREATE TABLE "dead_letters" (
    "id" BIGSERIAL NOT NULL,
    "pipeline_version_id" TEXT NOT NULL,
    "batch_id" BIGINT NOT NULL,
    "outcome" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "partition" INTEGER NOT NULL,
    "offset" BIGINT NOT NULL,
    "key" TEXT,
    "raw" BYTEA NOT NULL,
    "truncated" BOOLEAN NOT NULL DEFAULT false,
    "payload" JSONB,
    "ingest_time" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dead_letters_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "dedup_state" (
    "pipeline_version_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "event_time" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "dedup_state_pkey" PRIMARY KEY ("pipeline_version_id","key")
);

-- CreateTable
CREATE TABLE "batch_failures" (
    "id" BIGSERIAL NOT NULL,
    "pipeline_version_id" TEXT NOT NULL,
    "batch_id" BIGINT NOT NULL,
    "kind" TEXT NOT NULL,
    "rule" TEXT,
    "row_count" INTEGER NOT NULL,
    "message" TEXT NOT NULL,
    "samples" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "batch_failures_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "dead_letters_pipeline_version_id_outcome_created_at_idx" ON "dead_letters"("pipeline_version_id", "outcome", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "dead_letters_pipeline_version_id_partition_offset_key" ON "dead_letters"("pipeline_version_id", "partition", "offset");

-- CreateIndex
CREATE INDEX "dedup_state_pipeline_version_id_event_time_idx" ON "dedup_state"("pipeline_version_id", "event_time");

-- CreateIndex
CREATE INDEX "batch_failures_pipeline_version_id_created_at_idx" ON "batch_failures"("pipeline_version_id", "created_at");

-- AddForeignKey
ALTER TABLE "checkpoints" ADD CONSTRAINT "checkpoints_pipeline_version_id_fkey" FOREIGN KEY ("pipeline_version_id") REFERENCES "pipeline_versions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

