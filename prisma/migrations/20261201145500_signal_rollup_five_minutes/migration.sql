-- A third grain, 5 minutes, for ranges of a day and more: a 7-day chart (30-minute steps) reads ~2,000
-- buckets per series instead of ~10,000 minutes (docs/performance.md). The commit trigger folds each
-- batch into 10 s, 60 s and 300 s; the offset sampler writes a 300-second sample too.

CREATE OR REPLACE FUNCTION sluice_rollup_batch(pv TEXT, bid BIGINT, at TIMESTAMPTZ, input INT, o JSONB, p JSONB) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM sluice_rollup_batch_at(10::smallint, pv, bid, at, input, o, p);
  PERFORM sluice_rollup_batch_at(60::smallint, pv, bid, at, input, o, p);
  PERFORM sluice_rollup_batch_at(300::smallint, pv, bid, at, input, o, p);
EXCEPTION WHEN others THEN
  -- Derived data: a progress record that cannot be read must never fail the batch's commit.
  RAISE WARNING 'batch % of pipeline version % not folded into the chart rollups: %', bid, pv, SQLERRM;
END;
$$;

-- A coarse grain from a finer one that divides it, in one set-based pass: the same rows the trigger
-- writes batch by batch (sums, extremes, the values of the newest batch, the per-expectation maps
-- summed), from rows that are already typed — so, unlike a rebuild from batch_log, it cannot fail on a
-- progress record. Backfills the 5-minute grain below; time-series.int.test.ts compares it with the
-- trigger's rows.
CREATE FUNCTION sluice_rollups_from_finer(fine SMALLINT, coarse SMALLINT, only_version TEXT DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  origin CONSTANT TIMESTAMPTZ := TIMESTAMPTZ '2000-01-01 00:00:00+00';
BEGIN
  IF coarse % fine <> 0 THEN
    RAISE EXCEPTION 'grain % is not a whole number of % s buckets', coarse, fine;
  END IF;
  DELETE FROM batch_rollup WHERE grain_seconds = coarse AND (only_version IS NULL OR pipeline_version_id = only_version);
  DELETE FROM partition_rollup WHERE grain_seconds = coarse AND (only_version IS NULL OR pipeline_version_id = only_version);
  WITH f AS (
    SELECT r.*, date_bin(make_interval(secs => coarse), r.bucket_start, origin) AS c FROM batch_rollup r
     WHERE r.grain_seconds = fine AND (only_version IS NULL OR r.pipeline_version_id = only_version)
  ), sums AS (
    SELECT pv, c, k, sum(n) AS n, kind FROM (
      SELECT f.pipeline_version_id AS pv, f.c, e.key AS k, e.value::numeric AS n, 'v' AS kind FROM f, jsonb_each_text(f.violations) e
      UNION ALL SELECT f.pipeline_version_id, f.c, e.key, e.value::numeric, 'd' FROM f, jsonb_each_text(f.dropped_by) e) u
     GROUP BY pv, c, k, kind
  ), maps AS (
    SELECT pv, c, jsonb_object_agg(k, n) FILTER (WHERE kind = 'v') AS violations, jsonb_object_agg(k, n) FILTER (WHERE kind = 'd') AS dropped_by
      FROM sums GROUP BY pv, c
  )
  INSERT INTO batch_rollup (pipeline_version_id, grain_seconds, bucket_start, batches, first_batch_id, last_batch_id, last_committed_at,
      input_rows, sink, duplicate, filtered, quarantined, dead_letter, late, stale, dropped, unbalanced,
      plan_ms, read_ms, process_ms, commit_ms, total_ms, latency_p50, latency_p95, latency_p99,
      state_rows, state_bytes, watermark, event_time_max, ingest_time_max, violations, dropped_by)
  SELECT f.pipeline_version_id, coarse, f.c, sum(batches), min(first_batch_id), max(last_batch_id), max(last_committed_at),
         sum(input_rows), sum(sink), sum(duplicate), sum(filtered), sum(quarantined), sum(dead_letter), sum(late), sum(stale), sum(dropped), sum(unbalanced),
         sum(plan_ms), sum(read_ms), sum(process_ms), sum(commit_ms), sum(total_ms), max(latency_p50), max(latency_p95), max(latency_p99),
         (array_agg(state_rows ORDER BY last_batch_id DESC))[1], (array_agg(state_bytes ORDER BY last_batch_id DESC))[1],
         (array_agg(watermark ORDER BY last_batch_id DESC))[1], (array_agg(event_time_max ORDER BY last_batch_id DESC))[1], max(ingest_time_max),
         coalesce(max(m.violations::text)::jsonb, '{}'), coalesce(max(m.dropped_by::text)::jsonb, '{}')
    FROM f LEFT JOIN maps m ON m.pv = f.pipeline_version_id AND m.c = f.c
   GROUP BY f.pipeline_version_id, f.c;

  INSERT INTO partition_rollup (pipeline_version_id, grain_seconds, partition, bucket_start, last_batch_id, last_committed_at, rows_read,
      end_offset, latest_offset, event_time_max, last_data_at, idle)
  SELECT pipeline_version_id, coarse, partition, date_bin(make_interval(secs => coarse), bucket_start, origin), max(last_batch_id), max(last_committed_at), sum(rows_read),
         -- Each fine row holds its bucket's newest non-null value; the newest fine row that has one wins.
         (array_agg(end_offset ORDER BY last_batch_id DESC) FILTER (WHERE end_offset IS NOT NULL))[1],
         (array_agg(latest_offset ORDER BY last_batch_id DESC) FILTER (WHERE latest_offset IS NOT NULL))[1],
         (array_agg(event_time_max ORDER BY last_batch_id DESC) FILTER (WHERE event_time_max IS NOT NULL))[1],
         (array_agg(last_data_at ORDER BY last_batch_id DESC) FILTER (WHERE last_data_at IS NOT NULL))[1],
         (array_agg(idle ORDER BY last_batch_id DESC) FILTER (WHERE idle IS NOT NULL))[1]
    FROM partition_rollup
   WHERE grain_seconds = fine AND (only_version IS NULL OR pipeline_version_id = only_version)
   GROUP BY pipeline_version_id, partition, date_bin(make_interval(secs => coarse), bucket_start, origin);
END;
$$;

SELECT sluice_rollups_from_finer(60::smallint, 300::smallint);

-- The 5-minute offset sample is the newest minute's sample in those 5 minutes (the minute's first), so
-- a chart reads the same sample from either grain (recordOffsetSamples keeps it so from now on).
INSERT INTO offset_samples (pipeline_version_id, grain_seconds, partition, bucket_start, sampled_at, latest_offset, committed_offset)
SELECT DISTINCT ON (pipeline_version_id, partition, date_bin('300 seconds', bucket_start, TIMESTAMPTZ '2000-01-01 00:00:00+00'))
       pipeline_version_id, 300, partition, date_bin('300 seconds', bucket_start, TIMESTAMPTZ '2000-01-01 00:00:00+00'), sampled_at, latest_offset, committed_offset
  FROM offset_samples m WHERE m.grain_seconds = 60
 ORDER BY pipeline_version_id, partition, date_bin('300 seconds', m.bucket_start, TIMESTAMPTZ '2000-01-01 00:00:00+00'), m.bucket_start DESC
ON CONFLICT DO NOTHING;

-- The rebuild from batch_log (20261201090000_signal_rollup_rebuild) now writes the three grains.
CREATE OR REPLACE FUNCTION sluice_rebuild_rollups(only_version TEXT DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  g SMALLINT;
  origin CONSTANT TIMESTAMPTZ := TIMESTAMPTZ '2000-01-01 00:00:00+00';
BEGIN
  DELETE FROM batch_rollup WHERE only_version IS NULL OR pipeline_version_id = only_version;
  DELETE FROM partition_rollup WHERE only_version IS NULL OR pipeline_version_id = only_version;
  FOREACH g IN ARRAY ARRAY[10, 60, 300]::smallint[] LOOP
    WITH src AS (
      SELECT b.pipeline_version_id AS pv, b.batch_id, b.committed_at, b.input_rows,
             date_bin(make_interval(secs => g), b.committed_at, origin) AS bucket, x.o, x.p, x.d, x.l,
             CASE WHEN jsonb_typeof(x.o->'dropped') = 'object' THEN x.o->'dropped' ELSE '{}' END AS dr,
             CASE WHEN jsonb_typeof(x.p->'expectations') = 'object' THEN x.p->'expectations' ELSE '{}' END AS v
        FROM batch_log b
        CROSS JOIN LATERAL (SELECT
             CASE WHEN jsonb_typeof(b.progress->'outcomes') = 'object' THEN b.progress->'outcomes' WHEN jsonb_typeof(b.outcomes) = 'object' THEN b.outcomes ELSE '{}' END AS o,
             b.progress AS p,
             CASE WHEN jsonb_typeof(b.progress->'durationMs') = 'object' THEN b.progress->'durationMs' ELSE '{}' END AS d,
             CASE WHEN jsonb_typeof(b.progress->'latencyMs') = 'object' THEN b.progress->'latencyMs' ELSE '{}' END AS l) x
       WHERE only_version IS NULL OR b.pipeline_version_id = only_version
    ), per_batch AS (
      SELECT src.*, (SELECT coalesce(sum(value::numeric), 0) FROM jsonb_each_text(src.dr))::bigint AS num_dropped FROM src
    ), sums AS (
      SELECT pv, bucket, k, sum(n) AS n, kind FROM (
        SELECT pv, bucket, e.key AS k, e.value::numeric AS n, 'v' AS kind FROM src, jsonb_each_text(src.v) e
        UNION ALL SELECT pv, bucket, e.key, e.value::numeric, 'd' FROM src, jsonb_each_text(src.dr) e) u
       GROUP BY pv, bucket, k, kind
    ), maps AS (
      SELECT pv, bucket, jsonb_object_agg(k, n) FILTER (WHERE kind = 'v') AS violations, jsonb_object_agg(k, n) FILTER (WHERE kind = 'd') AS dropped_by
        FROM sums GROUP BY pv, bucket
    )
    INSERT INTO batch_rollup (pipeline_version_id, grain_seconds, bucket_start, batches, first_batch_id, last_batch_id, last_committed_at,
        input_rows, sink, duplicate, filtered, quarantined, dead_letter, late, stale, dropped, unbalanced,
        plan_ms, read_ms, process_ms, commit_ms, total_ms, latency_p50, latency_p95, latency_p99,
        state_rows, state_bytes, watermark, event_time_max, ingest_time_max, violations, dropped_by)
    SELECT a.pv, g, a.bucket, count(*), min(batch_id), max(batch_id), max(committed_at),
           sum(input_rows), sum(coalesce((o->>'sink')::bigint, 0)), sum(coalesce((o->>'duplicate')::bigint, 0)), sum(coalesce((o->>'filtered')::bigint, 0)),
           sum(coalesce((o->>'quarantined')::bigint, 0)), sum(coalesce((o->>'deadLetter')::bigint, 0)), sum(coalesce((o->>'late')::bigint, 0)),
           sum(coalesce((o->>'stale')::bigint, 0)), sum(num_dropped),
           count(*) FILTER (WHERE coalesce((o->>'sink')::bigint, 0) + coalesce((o->>'duplicate')::bigint, 0) + coalesce((o->>'filtered')::bigint, 0)
                                + coalesce((o->>'quarantined')::bigint, 0) + coalesce((o->>'deadLetter')::bigint, 0) + coalesce((o->>'late')::bigint, 0)
                                + coalesce((o->>'stale')::bigint, 0) + num_dropped <> input_rows),
           sum(coalesce((d->>'plan')::bigint, 0)), sum(coalesce((d->>'read')::bigint, 0)), sum(coalesce((d->>'process')::bigint, 0)),
           sum(coalesce((d->>'commit')::bigint, 0)), sum(coalesce((d->>'total')::bigint, 0)),
           max((l->>'p50')::int), max((l->>'p95')::int), max((l->>'p99')::int),
           (array_agg(coalesce((p->>'stateRows')::bigint, 0) ORDER BY batch_id DESC))[1], (array_agg(coalesce((p->>'stateBytes')::bigint, 0) ORDER BY batch_id DESC))[1],
           (array_agg((p->>'watermark')::timestamptz ORDER BY batch_id DESC))[1], (array_agg((p->>'eventTimeMax')::timestamptz ORDER BY batch_id DESC))[1],
           max((p->>'ingestTimeMax')::timestamptz),
           coalesce(max(m.violations::text)::jsonb, '{}'), coalesce(max(m.dropped_by::text)::jsonb, '{}')
      FROM per_batch a LEFT JOIN maps m ON m.pv = a.pv AND m.bucket = a.bucket
     GROUP BY a.pv, a.bucket;

    INSERT INTO partition_rollup (pipeline_version_id, grain_seconds, partition, bucket_start, last_batch_id, last_committed_at, rows_read,
        end_offset, latest_offset, event_time_max, last_data_at, idle)
    SELECT pv, g, partition, date_bin(make_interval(secs => g), committed_at, origin), max(batch_id), max(committed_at), sum(coalesce(end_offset - start_offset, 0)),
           (array_agg(end_offset ORDER BY batch_id DESC) FILTER (WHERE end_offset IS NOT NULL))[1],
           (array_agg(latest_offset ORDER BY batch_id DESC) FILTER (WHERE latest_offset IS NOT NULL))[1],
           (array_agg(event_time_max ORDER BY batch_id DESC) FILTER (WHERE event_time_max IS NOT NULL))[1],
           (array_agg(last_data_at ORDER BY batch_id DESC) FILTER (WHERE last_data_at IS NOT NULL))[1],
           (array_agg(idle ORDER BY batch_id DESC) FILTER (WHERE idle IS NOT NULL))[1]
      FROM (
        SELECT b.pipeline_version_id AS pv, b.batch_id, b.committed_at, k.*
          FROM batch_log b
          CROSS JOIN LATERAL (
            SELECT coalesce(s.partition, c.partition) AS partition, s.start_offset, s.end_offset, s.latest_offset, c.event_time_max, c.last_data_at, c.idle
              FROM (SELECT (e->>'partition')::int AS partition, (e->>'startOffset')::bigint AS start_offset, (e->>'endOffset')::bigint AS end_offset,
                           (e->>'latestOffset')::bigint AS latest_offset
                      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(b.progress->'sources') = 'array' THEN b.progress->'sources' ELSE '[]' END) e) s
              FULL JOIN (SELECT (e->>'partition')::int AS partition, (e->>'eventTimeMax')::timestamptz AS event_time_max,
                                (e->>'lastDataAt')::timestamptz AS last_data_at, (e->>'idle')::boolean AS idle
                           FROM jsonb_array_elements(CASE WHEN jsonb_typeof(b.progress->'partitionEventTime') = 'array' THEN b.progress->'partitionEventTime' ELSE '[]' END) e) c
                ON c.partition = s.partition) k
         WHERE only_version IS NULL OR b.pipeline_version_id = only_version
      ) parts
     GROUP BY pv, partition, date_bin(make_interval(secs => g), committed_at, origin);
  END LOOP;
END;
$$;
