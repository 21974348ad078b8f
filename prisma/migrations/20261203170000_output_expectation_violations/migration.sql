-- Violations of an output's own expectations (a pipeline with several outputs, docs/pipeline-spec.md)
-- were in each batch's progress record (outputs[].expectations) but not in the chart rollups, so the
-- violations chart, the Correctness signal and the violation_rate alert never saw them. They are now
-- summed with the pipeline's own, each under "<output>:<expectation>" (two outputs may name an
-- expectation alike), by the commit trigger and by the rebuild from batch_log.

-- The violations of one progress record: the pipeline's expectations, then each output's, prefixed.
CREATE FUNCTION sluice_batch_violations(p JSONB) RETURNS JSONB
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(jsonb_object_agg(k, n), '{}') FROM (
    SELECT k, sum(n) AS n FROM (
      SELECT e.key AS k, e.value::numeric AS n
        FROM jsonb_each_text(CASE WHEN jsonb_typeof(p->'expectations') = 'object' THEN p->'expectations' ELSE '{}' END) e
      UNION ALL
      SELECT (o->>'name') || ':' || e.key, e.value::numeric
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p->'outputs') = 'array' THEN p->'outputs' ELSE '[]' END) o,
             jsonb_each_text(CASE WHEN jsonb_typeof(o->'expectations') = 'object' THEN o->'expectations' ELSE '{}' END) e
       WHERE o->>'name' IS NOT NULL) u
     GROUP BY k) g
$$;

-- The commit trigger's entry point hands the grains a record whose `expectations` are all of them.
CREATE OR REPLACE FUNCTION sluice_rollup_batch(pv TEXT, bid BIGINT, at TIMESTAMPTZ, input INT, o JSONB, p JSONB) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  all_p JSONB;
BEGIN
  all_p := CASE WHEN jsonb_typeof(p) = 'object' THEN p || jsonb_build_object('expectations', sluice_batch_violations(p)) ELSE p END;
  PERFORM sluice_rollup_batch_at(10::smallint, pv, bid, at, input, o, all_p);
  PERFORM sluice_rollup_batch_at(60::smallint, pv, bid, at, input, o, all_p);
  PERFORM sluice_rollup_batch_at(300::smallint, pv, bid, at, input, o, all_p);
EXCEPTION WHEN others THEN
  -- Derived data: a progress record that cannot be read must never fail the batch's commit.
  RAISE WARNING 'batch % of pipeline version % not folded into the chart rollups: %', bid, pv, SQLERRM;
END;
$$;

-- The rebuild from batch_log (20261201145500_signal_rollup_five_minutes), the same but for `v`.
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
             sluice_batch_violations(x.p) AS v
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

-- Batches committed before this migration keep their rollups (batch_log may have been pruned past
-- them); `SELECT sluice_rebuild_rollups(<version id>)` re-derives a version's from what batch_log holds.
