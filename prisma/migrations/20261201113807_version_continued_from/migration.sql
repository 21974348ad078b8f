-- AlterTable
ALTER TABLE "pipeline_versions" ADD COLUMN     "continued_from_id" TEXT;

