-- A version whose join reads another pipeline's SCD2 history (join.dimension.pipeline) records which
-- pipeline it depends on, checked and written by its registration (engine join/dimension-pipeline.ts).
ALTER TABLE "pipeline_versions" ADD COLUMN "dimension_pipeline_id" TEXT;
