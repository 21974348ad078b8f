-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "requeue_id" BIGINT,
ADD COLUMN     "requeued_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "webhook_requeues" (
    "id" BIGSERIAL NOT NULL,
    "pipeline_id" TEXT NOT NULL,
    "idempotency_key" TEXT,
    "deliveries" INTEGER NOT NULL,
    "actor" TEXT NOT NULL,
    "reason" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_requeues_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhook_requeues_pipeline_id_created_at_idx" ON "webhook_requeues"("pipeline_id", "created_at");

