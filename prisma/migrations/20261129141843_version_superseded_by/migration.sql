-- DropIndex
DROP INDEX "pipeline_versions_pipeline_id_spec_hash_key";

-- AlterTable
ALTER TABLE "pipeline_versions" ADD COLUMN     "superseded_by_id" TEXT;

-- CreateIndex
CREATE INDEX "pipeline_versions_pipeline_id_spec_hash_idx" ON "pipeline_versions"("pipeline_id", "spec_hash");


-- Versions already fenced by a newer one (their lease owner says so) were superseded by the next version.
UPDATE "pipeline_versions" v SET "superseded_by_id" = n."id"
  FROM "checkpoints" c, "pipeline_versions" n
 WHERE c."pipeline_version_id" = v."id" AND c."lease_owner" = 'superseded'
   AND n."pipeline_id" = v."pipeline_id" AND n."version" = v."version" + 1;
