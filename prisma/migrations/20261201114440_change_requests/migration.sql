-- CreateTable
CREATE TABLE "change_requests" (
    "id" BIGSERIAL NOT NULL,
    "kind" TEXT NOT NULL,
    "pipeline_id" TEXT NOT NULL,
    "pipeline_version_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "requested_by_id" TEXT,
    "requested_by" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "impact" JSONB,
    "decided_by_id" TEXT,
    "decided_by" TEXT,
    "decided_at" TIMESTAMPTZ(3),
    "decision_note" TEXT NOT NULL DEFAULT '',
    "applied_at" TIMESTAMPTZ(3),
    "result" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "change_requests_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "change_request_comments" (
    "id" BIGSERIAL NOT NULL,
    "change_request_id" BIGINT NOT NULL,
    "author_id" TEXT,
    "author" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "change_request_comments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "checkpoint_resets" (
    "id" BIGSERIAL NOT NULL,
    "pipeline_version_id" TEXT NOT NULL,
    "change_request_id" BIGINT NOT NULL,
    "after_batch_id" BIGINT NOT NULL,
    "offsets_before" JSONB NOT NULL,
    "offsets_after" JSONB NOT NULL,
    "state_cleared" BOOLEAN NOT NULL,
    "requested_by" TEXT NOT NULL,
    "approved_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "checkpoint_resets_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "change_requests_status_created_at_idx" ON "change_requests"("status", "created_at");

-- CreateIndex
CREATE INDEX "change_requests_pipeline_id_created_at_idx" ON "change_requests"("pipeline_id", "created_at");

-- CreateIndex
CREATE INDEX "change_request_comments_change_request_id_created_at_idx" ON "change_request_comments"("change_request_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "checkpoint_resets_change_request_id_key" ON "checkpoint_resets"("change_request_id");

-- CreateIndex
CREATE INDEX "checkpoint_resets_pipeline_version_id_created_at_idx" ON "checkpoint_resets"("pipeline_version_id", "created_at");

-- AddForeignKey
ALTER TABLE "change_request_comments" ADD CONSTRAINT "change_request_comments_change_request_id_fkey" FOREIGN KEY ("change_request_id") REFERENCES "change_requests"("id") ON DELETE CASCADE ON UPDATE CASCADE;

