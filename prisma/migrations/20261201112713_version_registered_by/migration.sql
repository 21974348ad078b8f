-- AlterTable
ALTER TABLE "pipeline_versions" ADD COLUMN     "reason" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "registered_by" TEXT;

