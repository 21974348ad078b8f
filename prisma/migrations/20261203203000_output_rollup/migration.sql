-- Per-output chart buckets. A pipeline with several outputs (docs/pipeline-spec.md, "Several outputs")
-- writes each output's outcomes, lateness, watermark and state in its progress record (outputs[]),
-- but batch_rollup sums the pipeline as a whole, so no chart or alert could tell one output from
-- another. output_rollup keeps, per version, output and bucket (10 s, 60 s and 300 s, like
-- batch_rollup): the rows that reached the output, the rows it wrote, its late rows, and its state
-- and watermark after the bucket's last batch. Kept by the same commit trigger, rebuilt by the same
-- sluice_rebuild_rollups.

CREATE TABLE "output_rollup" (
    "pipeline_version_id" TEXT NOT NULL,
    "grain_seconds" SMALLINT NOT NULL,
    "output" TEXT NOT NULL,
    "bucket_start" TIMESTAMPTZ(3) NOT NULL,
    "batches" INTEGER NOT NULL,
    "last_batch_id" BIGINT NOT NULL,
    "last_committed_at" TIMESTAMPTZ(3) NOT NULL,
    "rows" BIGINT NOT NULL,
    "sink" BIGINT NOT NULL,
    "late" BIGINT NOT NULL,
    "late_accepted" BIGINT NOT NULL,
    "state_rows" BIGINT NOT NULL,
    "state_bytes" BIGINT NOT NULL,
    "watermark" TIMESTAMPTZ(3),

    CONSTRAINT "output_rollup_pkey" PRIMARY KEY ("pipeline_version_id", "grain_seconds", "bucket_start", "output")
);
-- Updated in place by every batch of the bucket, like batch_rollup (20261201083944_signal_rollup_grains).
ALTER TABLE "output_rollup" SET (fillfactor = 70);

-- One batch's outputs folded into one grain's buckets: counts summed, state and watermark those of the
-- newest batch. A record without outputs (one sink, no join) folds nothing.
CREATE FUNCTION sluice_rollup_outputs_at(g SMALLINT, pv TEXT, bid BIGINT, at TIMESTAMPTZ, p JSONB) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO output_rollup AS r (pipeline_version_id, grain_seconds, output, bucket_start, batches, last_batch_id, last_committed_at,
      rows, sink, late, late_accepted, state_rows, state_bytes, watermark)
  SELECT pv, g, o->>'name', date_bin(make_interval(secs => g), at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), 1, bid, at,
         coalesce((o->'outcomes'->>'rows')::bigint, 0), coalesce((o->'outcomes'->>'sink')::bigint, 0),
         coalesce((o->'outcomes'->>'late')::bigint, 0), coalesce((o->>'lateAccepted')::bigint, 0),
         coalesce((o->>'stateRows')::bigint, 0), coalesce((o->>'stateBytes')::bigint, 0), (o->>'watermark')::timestamptz
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p->'outputs') = 'array' THEN p->'outputs' ELSE '[]' END) o
   WHERE o->>'name' IS NOT NULL
  ON CONFLICT (pipeline_version_id, grain_seconds, bucket_start, output) DO UPDATE SET
      batches = r.batches + 1,
      last_batch_id = greatest(r.last_batch_id, EXCLUDED.last_batch_id),
      last_committed_at = greatest(r.last_committed_at, EXCLUDED.last_committed_at),
      rows = r.rows + EXCLUDED.rows, sink = r.sink + EXCLUDED.sink, late = r.late + EXCLUDED.late,
      late_accepted = r.late_accepted + EXCLUDED.late_accepted,
      state_rows = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN EXCLUDED.state_rows ELSE r.state_rows END,
      state_bytes = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN EXCLUDED.state_bytes ELSE r.state_bytes END,
      watermark = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN EXCLUDED.watermark ELSE r.watermark END;
$$;

-- The commit trigger's entry point (20261203170000_output_expectation_violations) folds the outputs too,
-- inside the same guard: a record that cannot be read never fails the commit.
CREATE OR REPLACE FUNCTION sluice_rollup_batch(pv TEXT, bid BIGINT, at TIMESTAMPTZ, input INT, o JSONB, p JSONB) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  all_p JSONB;
  g SMALLINT;
BEGIN
  all_p := CASE WHEN jsonb_typeof(p) = 'object' THEN p || jsonb_build_object('expectations', sluice_batch_violations(p)) ELSE p END;
  FOREACH g IN ARRAY ARRAY[10, 60, 300]::smallint[] LOOP
    PERFORM sluice_rollup_batch_at(g, pv, bid, at, input, o, all_p);
    PERFORM sluice_rollup_outputs_at(g, pv, bid, at, p);
  END LOOP;
EXCEPTION WHEN others THEN
  -- Derived data: a progress record that cannot be read must never fail the batch's commit.
  RAISE WARNING 'batch % of pipeline version % not folded into the chart rollups: %', bid, pv, SQLERRM;
END;
$$;

-- output_rollup from batch_log in one set-based pass per grain: the rows the trigger writes batch by batch.
CREATE FUNCTION sluice_rebuild_output_rollups(only_version TEXT DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  g SMALLINT;
BEGIN
  DELETE FROM output_rollup WHERE only_version IS NULL OR pipeline_version_id = only_version;
  FOREACH g IN ARRAY ARRAY[10, 60, 300]::smallint[] LOOP
    INSERT INTO output_rollup (pipeline_version_id, grain_seconds, output, bucket_start, batches, last_batch_id, last_committed_at,
        rows, sink, late, late_accepted, state_rows, state_bytes, watermark)
    SELECT pv, g, name, bucket, count(*), max(batch_id), max(committed_at),
           sum(coalesce((o->'outcomes'->>'rows')::bigint, 0)), sum(coalesce((o->'outcomes'->>'sink')::bigint, 0)),
           sum(coalesce((o->'outcomes'->>'late')::bigint, 0)), sum(coalesce((o->>'lateAccepted')::bigint, 0)),
           (array_agg(coalesce((o->>'stateRows')::bigint, 0) ORDER BY batch_id DESC))[1],
           (array_agg(coalesce((o->>'stateBytes')::bigint, 0) ORDER BY batch_id DESC))[1],
           (array_agg((o->>'watermark')::timestamptz ORDER BY batch_id DESC))[1]
      FROM (
        SELECT b.pipeline_version_id AS pv, b.batch_id, b.committed_at, o, o->>'name' AS name,
               date_bin(make_interval(secs => g), b.committed_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket
          FROM batch_log b
          CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(b.progress->'outputs') = 'array' THEN b.progress->'outputs' ELSE '[]' END) o
         WHERE (only_version IS NULL OR b.pipeline_version_id = only_version) AND o->>'name' IS NOT NULL
      ) per_output
     GROUP BY pv, name, bucket;
  END LOOP;
END;
$$;

-- sluice_rebuild_rollups keeps its name and signature (docs/database.md) and now rebuilds every rollup:
-- the batch and partition rollups as before (renamed, unchanged), then the outputs'.
ALTER FUNCTION sluice_rebuild_rollups(TEXT) RENAME TO sluice_rebuild_batch_rollups;
CREATE FUNCTION sluice_rebuild_rollups(only_version TEXT DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM sluice_rebuild_batch_rollups(only_version);
  PERFORM sluice_rebuild_output_rollups(only_version);
END;
$$;

-- The batches committed before this migration, from what batch_log still holds.
SELECT sluice_rebuild_output_rollups();
