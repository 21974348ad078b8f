-- Serving is explicit, and sinks live apart from the control plane (issues 20 and 19 item 5).
-- A pipeline names its serving version; each version names the physical tables it writes, in the
-- schema sluice_sinks; readers query the spec's table name, which becomes a view over the serving
-- version's physical table. Written to be run again safely (a test runs it over an install in the old
-- layout): every step only does what is not done yet.

ALTER TABLE "pipelines" ADD COLUMN IF NOT EXISTS "serving_version_id" TEXT;
ALTER TABLE "pipeline_versions" ADD COLUMN IF NOT EXISTS "sink_tables" JSONB NOT NULL DEFAULT '{}';
CREATE UNIQUE INDEX IF NOT EXISTS "pipelines_serving_version_id_key" ON "pipelines"("serving_version_id");
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'pipelines_serving_version_id_fkey') THEN
    ALTER TABLE "pipelines" ADD CONSTRAINT "pipelines_serving_version_id_fkey" FOREIGN KEY ("serving_version_id")
      REFERENCES "pipeline_versions"("id") ON DELETE SET NULL ON UPDATE CASCADE;
  END IF;
END $$;
CREATE SCHEMA IF NOT EXISTS "sluice_sinks";

-- The serving version of an existing pipeline: its newest version that was not superseded (the one
-- "serving" meant until now), else its newest.
UPDATE "pipelines" p SET "serving_version_id" = (
    SELECT v."id" FROM "pipeline_versions" v WHERE v."pipeline_id" = p."id"
     ORDER BY (v."superseded_by_id" IS NULL) DESC, v."version" DESC LIMIT 1)
 WHERE p."serving_version_id" IS NULL;

-- engine store/physical-sink-table.ts physicalSinkTable, in SQL: the serving name without "public.",
-- "@v<version>", cut to 63 bytes with "#" and 8 hex of sha256(serving name) when longer.
CREATE OR REPLACE FUNCTION pg_temp.sluice_physical_sink_table(serving TEXT, version INT) RETURNS TEXT
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN octet_length(b.base || s.suffix) <= 63 THEN b.base || s.suffix
              ELSE left(b.base, 63 - length(s.suffix) - 9) || '#' ||
                   left(encode(sha256(convert_to(serving, 'UTF8')), 'hex'), 8) || s.suffix END
    FROM (SELECT CASE WHEN serving LIKE 'public.%' THEN substr(serving, 8) ELSE serving END AS base) b,
         (SELECT '@v' || version AS suffix) s
$$;

-- Each version's tables: every table its spec writes that its pipeline claims, named after the first
-- version of the pipeline that wrote it (all of them wrote that one table until now).
WITH written AS (
  SELECT v."id", v."pipeline_id", v."version", t.name
    FROM "pipeline_versions" v
    CROSS JOIN LATERAL (
          SELECT v."spec" #>> '{sink,postgres,table}' AS w
          UNION ALL
          SELECT o.value #>> '{sink,postgres,table}'
            FROM jsonb_each(CASE WHEN jsonb_typeof(v."spec" -> 'outputs') = 'object' THEN v."spec" -> 'outputs' ELSE '{}'::jsonb END) o
         ) w
    CROSS JOIN LATERAL (SELECT CASE WHEN position('.' IN w.w) > 0 THEN w.w ELSE 'public.' || w.w END AS name) t
   WHERE w.w IS NOT NULL
), claimed AS (
  SELECT w.*, min(w."version") OVER (PARTITION BY w."pipeline_id", w.name) AS first_version
    FROM written w JOIN "sink_claims" c ON c."table_name" = w.name AND c."pipeline_id" = w."pipeline_id"
)
UPDATE "pipeline_versions" v SET "sink_tables" = m.tables
  FROM (SELECT "id", jsonb_object_agg(name, pg_temp.sluice_physical_sink_table(name, first_version)) AS tables
          FROM claimed GROUP BY "id") m
 WHERE v."id" = m."id" AND v."sink_tables" = '{}'::jsonb;

-- Move each existing claimed sink table into sluice_sinks under its physical name, and put a view of
-- the same columns at its old name (renamed first, so two schemas' tables of one name cannot collide).
DO $$
DECLARE
  r RECORD;
BEGIN
  FOR r IN
    SELECT c."table_name" AS serving, split_part(c."table_name", '.', 1) AS sch, split_part(c."table_name", '.', 2) AS tbl,
           (SELECT v."sink_tables" ->> c."table_name" FROM "pipeline_versions" v
             WHERE v."pipeline_id" = c."pipeline_id" AND v."sink_tables" ? c."table_name"
             ORDER BY v."version" LIMIT 1) AS physical
      FROM "sink_claims" c
      JOIN pg_class k ON k.relname = split_part(c."table_name", '.', 2) AND k.relkind IN ('r', 'p')
      JOIN pg_namespace n ON n.oid = k.relnamespace AND n.nspname = split_part(c."table_name", '.', 1)
     ORDER BY c."table_name"
  LOOP
    IF r.physical IS NULL THEN CONTINUE; END IF;
    EXECUTE format('ALTER TABLE %I.%I RENAME TO %I', r.sch, r.tbl, r.physical);
    EXECUTE format('ALTER TABLE %I.%I SET SCHEMA "sluice_sinks"', r.sch, r.physical);
    EXECUTE format('CREATE VIEW %I.%I AS SELECT * FROM "sluice_sinks".%I', r.sch, r.tbl, r.physical);
  END LOOP;
END $$;
