-- AlterTable
ALTER TABLE "pipeline_runs" ADD COLUMN     "attempt_batch_id" BIGINT,
ADD COLUMN     "unfinished_attempts" INTEGER NOT NULL DEFAULT 0;

