-- CreateTable
CREATE TABLE "window_state" (
    "pipeline_version_id" TEXT NOT NULL,
    "group_key" TEXT NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "window_end" TIMESTAMPTZ(3) NOT NULL,
    "group_values" JSONB NOT NULL,
    "accumulators" JSONB NOT NULL,
    "bytes" INTEGER NOT NULL,
    "updated_batch_id" BIGINT NOT NULL,

    CONSTRAINT "window_state_pkey" PRIMARY KEY ("pipeline_version_id","group_key","window_start")
);

-- CreateTable
CREATE TABLE "cdc_state" (
    "pipeline_version_id" TEXT NOT NULL,
    "entity_key" TEXT NOT NULL,
    "sequence" TEXT NOT NULL,
    "deleted" BOOLEAN NOT NULL,

    CONSTRAINT "cdc_state_pkey" PRIMARY KEY ("pipeline_version_id","entity_key","sequence")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "pipeline_id" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "payload" JSONB NOT NULL,
    "pipeline_version_id" TEXT NOT NULL,
    "batch_id" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_attempt_at" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("pipeline_id","idempotency_key")
);

-- CreateIndex
CREATE INDEX "window_state_pipeline_version_id_window_end_idx" ON "window_state"("pipeline_version_id", "window_end");

-- CreateIndex
CREATE INDEX "webhook_deliveries_pipeline_id_status_created_at_idx" ON "webhook_deliveries"("pipeline_id", "status", "created_at");

