-- Partition groups (source.kafka.parallelism, docs/partition-groups.md): one row per group of a
-- version — its lease, last batch and its partitions' end offsets — beside the version's checkpoint.
CREATE TABLE "group_checkpoints" (
    "pipeline_version_id" TEXT NOT NULL,
    "group_no" INTEGER NOT NULL,
    "last_batch_id" BIGINT NOT NULL,
    "end_offsets" JSONB NOT NULL DEFAULT '{}',
    "lease_epoch" BIGINT NOT NULL DEFAULT 0,
    "lease_owner" TEXT,
    "lease_at" TIMESTAMPTZ(3),
    "version_epoch" BIGINT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "group_checkpoints_pkey" PRIMARY KEY ("pipeline_version_id","group_no")
);

ALTER TABLE "group_checkpoints" ADD CONSTRAINT "group_checkpoints_pipeline_version_id_fkey" FOREIGN KEY ("pipeline_version_id") REFERENCES "pipeline_versions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
