-- CreateTable
CREATE TABLE "sink_claims" (
    "table_name" TEXT NOT NULL,
    "pipeline_id" TEXT NOT NULL,
    "claimed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sink_claims_pkey" PRIMARY KEY ("table_name")
);

-- CreateIndex
CREATE INDEX "sink_claims_pipeline_id_idx" ON "sink_claims"("pipeline_id");

-- AddForeignKey
ALTER TABLE "sink_claims" ADD CONSTRAINT "sink_claims_pipeline_id_fkey" FOREIGN KEY ("pipeline_id") REFERENCES "pipelines"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every table a registered version writes is claimed by the pipeline that registered it first (when two
-- pipelines already share one — what issue 19 found possible — the earlier keeps it; the later one's
-- next registration is refused). A top-level sink and each output's sink; unqualified names are public.
INSERT INTO "sink_claims" ("table_name", "pipeline_id", "claimed_at")
SELECT DISTINCT ON (t.name) t.name, v.pipeline_id, v.created_at
  FROM "pipeline_versions" v
  CROSS JOIN LATERAL (
        SELECT v.spec #>> '{sink,postgres,table}' AS written
        UNION ALL
        SELECT o.value #>> '{sink,postgres,table}'
          FROM jsonb_each(CASE WHEN jsonb_typeof(v.spec -> 'outputs') = 'object' THEN v.spec -> 'outputs' ELSE '{}'::jsonb END) o
       ) w
  CROSS JOIN LATERAL (SELECT CASE WHEN position('.' IN w.written) > 0 THEN w.written ELSE 'public.' || w.written END AS name) t
 WHERE w.written IS NOT NULL
 ORDER BY t.name, v.created_at, v.version;
