-- CreateEnum
CREATE TYPE "PipelineDesiredState" AS ENUM ('running', 'paused', 'stopped');

-- CreateEnum
CREATE TYPE "PipelineRunStatus" AS ENUM ('running', 'paused', 'stopped', 'failed');

-- CreateTable
CREATE TABLE "pipeline_runs" (
    "pipeline_version_id" TEXT NOT NULL,
    "desired_state" "PipelineDesiredState" NOT NULL DEFAULT 'stopped',
    "status" "PipelineRunStatus" NOT NULL DEFAULT 'stopped',
    "schedule_seq" INTEGER NOT NULL DEFAULT 0,
    "consecutive_failures" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "last_error_at" TIMESTAMPTZ(3),
    "failed_batch_id" BIGINT,
    "failure_sample" JSONB,
    "batch_started_at" TIMESTAMPTZ(3),
    "batch_worker_id" TEXT,
    "last_batch_at" TIMESTAMPTZ(3),
    "next_batch_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "pipeline_runs_pkey" PRIMARY KEY ("pipeline_version_id")
);

-- CreateTable
CREATE TABLE "pipeline_run_transitions" (
    "id" BIGSERIAL NOT NULL,
    "pipeline_version_id" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "from_status" "PipelineRunStatus",
    "to_status" "PipelineRunStatus" NOT NULL,
    "desired_state" "PipelineDesiredState" NOT NULL,
    "actor" TEXT NOT NULL,
    "reason" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "pipeline_run_transitions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workers" (
    "id" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "queue" TEXT NOT NULL,
    "concurrency" INTEGER NOT NULL,
    "active_jobs" INTEGER NOT NULL DEFAULT 0,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_heartbeat_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "stopped_at" TIMESTAMPTZ(3),

    CONSTRAINT "workers_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "pipeline_runs_status_idx" ON "pipeline_runs"("status");

-- CreateIndex
CREATE INDEX "pipeline_run_transitions_pipeline_version_id_created_at_idx" ON "pipeline_run_transitions"("pipeline_version_id", "created_at");

-- CreateIndex
CREATE INDEX "workers_last_heartbeat_at_idx" ON "workers"("last_heartbeat_at");

-- AddForeignKey
ALTER TABLE "pipeline_runs" ADD CONSTRAINT "pipeline_runs_pipeline_version_id_fkey" FOREIGN KEY ("pipeline_version_id") REFERENCES "pipeline_versions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "pipeline_run_transitions" ADD CONSTRAINT "pipeline_run_transitions_pipeline_version_id_fkey" FOREIGN KEY ("pipeline_version_id") REFERENCES "pipeline_runs"("pipeline_version_id") ON DELETE CASCADE ON UPDATE CASCADE;

