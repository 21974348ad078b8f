-- Per-group turns on the workers (docs/workers.md "Partition groups"): a version read in N partition
-- groups is scheduled as N chains of batch jobs, one per group, each with its own turn, batch in
-- flight and attempt counts. The version's pipeline_runs row keeps its one lifecycle (status, desired
-- state, the run's turn that every start bumps); a group's row belongs to the run turn it was fanned
-- out in (run_seq).
CREATE TABLE "pipeline_run_groups" (
    "pipeline_version_id" TEXT NOT NULL,
    "group_no" INTEGER NOT NULL,
    "run_seq" INTEGER NOT NULL,
    "schedule_seq" INTEGER NOT NULL DEFAULT 0,
    "consecutive_failures" INTEGER NOT NULL DEFAULT 0,
    "batch_started_at" TIMESTAMPTZ(3),
    "batch_worker_id" TEXT,
    "attempt_batch_id" BIGINT,
    "unfinished_attempts" INTEGER NOT NULL DEFAULT 0,
    "last_batch_at" TIMESTAMPTZ(3),
    "next_batch_at" TIMESTAMPTZ(3),
    "drained" BOOLEAN NOT NULL DEFAULT false,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "pipeline_run_groups_pkey" PRIMARY KEY ("pipeline_version_id","group_no")
);

ALTER TABLE "pipeline_run_groups" ADD CONSTRAINT "pipeline_run_groups_pipeline_version_id_fkey" FOREIGN KEY ("pipeline_version_id") REFERENCES "pipeline_runs"("pipeline_version_id") ON DELETE CASCADE ON UPDATE CASCADE;
