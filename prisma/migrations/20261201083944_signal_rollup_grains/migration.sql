-- AlterTable
ALTER TABLE "batch_rollup" DROP CONSTRAINT "batch_rollup_pkey",
ADD COLUMN     "grain_seconds" SMALLINT NOT NULL DEFAULT 10,
ADD CONSTRAINT "batch_rollup_pkey" PRIMARY KEY ("pipeline_version_id", "grain_seconds", "bucket_start");

-- AlterTable
ALTER TABLE "partition_rollup" DROP CONSTRAINT "partition_rollup_pkey",
ADD COLUMN     "grain_seconds" SMALLINT NOT NULL DEFAULT 10,
ADD CONSTRAINT "partition_rollup_pkey" PRIMARY KEY ("pipeline_version_id", "grain_seconds", "bucket_start", "partition");

-- AlterTable
ALTER TABLE "offset_samples" DROP CONSTRAINT "offset_samples_pkey",
ADD COLUMN     "grain_seconds" SMALLINT NOT NULL DEFAULT 10,
ADD CONSTRAINT "offset_samples_pkey" PRIMARY KEY ("pipeline_version_id", "grain_seconds", "bucket_start", "partition");


-- Partly filled pages leave room for the in-place (HOT) updates each batch makes to its buckets.
ALTER TABLE "batch_rollup" SET (fillfactor = 70);
ALTER TABLE "partition_rollup" SET (fillfactor = 70);

-- A batch is now folded into two grains: 10 s (ranges up to an hour) and 60 s (longer ranges and the
-- fleet), so a 7-day chart reads ~10k rows per version instead of ~60k.
CREATE FUNCTION sluice_rollup_batch_at(g SMALLINT, pv TEXT, bid BIGINT, at TIMESTAMPTZ, input INT, o JSONB, p JSONB) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  bucket TIMESTAMPTZ := date_bin(make_interval(secs => g), at, TIMESTAMPTZ '2000-01-01 00:00:00+00');
  num_dropped BIGINT;
  total BIGINT;
  d JSONB := CASE WHEN jsonb_typeof(p->'durationMs') = 'object' THEN p->'durationMs' ELSE '{}' END;
  l JSONB := CASE WHEN jsonb_typeof(p->'latencyMs') = 'object' THEN p->'latencyMs' ELSE '{}' END;
  v JSONB;
  dr JSONB;
BEGIN
  o := CASE WHEN jsonb_typeof(p->'outcomes') = 'object' THEN p->'outcomes' WHEN jsonb_typeof(o) = 'object' THEN o ELSE '{}' END;
  dr := CASE WHEN jsonb_typeof(o->'dropped') = 'object' THEN o->'dropped' ELSE '{}' END;
  SELECT coalesce(sum(value::numeric), 0) INTO num_dropped FROM jsonb_each_text(dr);
  total := coalesce((o->>'sink')::bigint, 0) + coalesce((o->>'duplicate')::bigint, 0) + coalesce((o->>'filtered')::bigint, 0)
         + coalesce((o->>'quarantined')::bigint, 0) + coalesce((o->>'deadLetter')::bigint, 0) + coalesce((o->>'late')::bigint, 0)
         + coalesce((o->>'stale')::bigint, 0) + num_dropped;
  v := CASE WHEN jsonb_typeof(p->'expectations') = 'object' THEN p->'expectations' ELSE '{}' END;

  INSERT INTO batch_rollup AS r (pipeline_version_id, grain_seconds, bucket_start, batches, first_batch_id, last_batch_id, last_committed_at,
      input_rows, sink, duplicate, filtered, quarantined, dead_letter, late, stale, dropped, unbalanced,
      plan_ms, read_ms, process_ms, commit_ms, total_ms, latency_p50, latency_p95, latency_p99,
      state_rows, state_bytes, watermark, event_time_max, ingest_time_max, violations, dropped_by)
  VALUES (pv, g, bucket, 1, bid, bid, at,
      input, coalesce((o->>'sink')::bigint, 0), coalesce((o->>'duplicate')::bigint, 0), coalesce((o->>'filtered')::bigint, 0),
      coalesce((o->>'quarantined')::bigint, 0), coalesce((o->>'deadLetter')::bigint, 0), coalesce((o->>'late')::bigint, 0),
      coalesce((o->>'stale')::bigint, 0), num_dropped, CASE WHEN total = input THEN 0 ELSE 1 END,
      coalesce((d->>'plan')::bigint, 0), coalesce((d->>'read')::bigint, 0), coalesce((d->>'process')::bigint, 0),
      coalesce((d->>'commit')::bigint, 0), coalesce((d->>'total')::bigint, 0),
      (l->>'p50')::int, (l->>'p95')::int, (l->>'p99')::int,
      coalesce((p->>'stateRows')::bigint, 0), coalesce((p->>'stateBytes')::bigint, 0),
      (p->>'watermark')::timestamptz, (p->>'eventTimeMax')::timestamptz, (p->>'ingestTimeMax')::timestamptz, v, dr)
  ON CONFLICT (pipeline_version_id, grain_seconds, bucket_start) DO UPDATE SET
      batches = r.batches + 1,
      first_batch_id = least(r.first_batch_id, EXCLUDED.first_batch_id),
      last_batch_id = greatest(r.last_batch_id, EXCLUDED.last_batch_id),
      last_committed_at = greatest(r.last_committed_at, EXCLUDED.last_committed_at),
      input_rows = r.input_rows + EXCLUDED.input_rows, sink = r.sink + EXCLUDED.sink, duplicate = r.duplicate + EXCLUDED.duplicate,
      filtered = r.filtered + EXCLUDED.filtered, quarantined = r.quarantined + EXCLUDED.quarantined,
      dead_letter = r.dead_letter + EXCLUDED.dead_letter, late = r.late + EXCLUDED.late, stale = r.stale + EXCLUDED.stale,
      dropped = r.dropped + EXCLUDED.dropped, unbalanced = r.unbalanced + EXCLUDED.unbalanced,
      plan_ms = r.plan_ms + EXCLUDED.plan_ms, read_ms = r.read_ms + EXCLUDED.read_ms, process_ms = r.process_ms + EXCLUDED.process_ms,
      commit_ms = r.commit_ms + EXCLUDED.commit_ms, total_ms = r.total_ms + EXCLUDED.total_ms,
      -- greatest() ignores nulls: the worst batch with rows.
      latency_p50 = greatest(r.latency_p50, EXCLUDED.latency_p50), latency_p95 = greatest(r.latency_p95, EXCLUDED.latency_p95),
      latency_p99 = greatest(r.latency_p99, EXCLUDED.latency_p99),
      state_rows = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN EXCLUDED.state_rows ELSE r.state_rows END,
      state_bytes = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN EXCLUDED.state_bytes ELSE r.state_bytes END,
      watermark = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN EXCLUDED.watermark ELSE r.watermark END,
      event_time_max = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN EXCLUDED.event_time_max ELSE r.event_time_max END,
      ingest_time_max = greatest(r.ingest_time_max, EXCLUDED.ingest_time_max),
      violations = (SELECT coalesce(jsonb_object_agg(k, n), '{}') FROM (
          SELECT key AS k, sum(value::numeric) AS n FROM (SELECT * FROM jsonb_each_text(r.violations) UNION ALL SELECT * FROM jsonb_each_text(EXCLUDED.violations)) e GROUP BY key) g),
      dropped_by = (SELECT coalesce(jsonb_object_agg(k, n), '{}') FROM (
          SELECT key AS k, sum(value::numeric) AS n FROM (SELECT * FROM jsonb_each_text(r.dropped_by) UNION ALL SELECT * FROM jsonb_each_text(EXCLUDED.dropped_by)) e GROUP BY key) g);

  INSERT INTO partition_rollup AS r (pipeline_version_id, grain_seconds, partition, bucket_start, last_batch_id, last_committed_at, rows_read,
      end_offset, latest_offset, event_time_max, last_data_at, idle)
  SELECT pv, g, coalesce(s.partition, c.partition), bucket, bid, at, coalesce(s.end_offset - s.start_offset, 0),
         s.end_offset, s.latest_offset, c.event_time_max, c.last_data_at, c.idle
    FROM (SELECT (e->>'partition')::int AS partition, (e->>'startOffset')::bigint AS start_offset, (e->>'endOffset')::bigint AS end_offset,
                 (e->>'latestOffset')::bigint AS latest_offset
            FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p->'sources') = 'array' THEN p->'sources' ELSE '[]' END) e) s
    FULL JOIN (SELECT (e->>'partition')::int AS partition, (e->>'eventTimeMax')::timestamptz AS event_time_max,
                      (e->>'lastDataAt')::timestamptz AS last_data_at, (e->>'idle')::boolean AS idle
                 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p->'partitionEventTime') = 'array' THEN p->'partitionEventTime' ELSE '[]' END) e) c
      ON c.partition = s.partition
  ON CONFLICT (pipeline_version_id, grain_seconds, bucket_start, partition) DO UPDATE SET
      rows_read = r.rows_read + EXCLUDED.rows_read,
      last_batch_id = greatest(r.last_batch_id, EXCLUDED.last_batch_id),
      last_committed_at = greatest(r.last_committed_at, EXCLUDED.last_committed_at),
      end_offset = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN coalesce(EXCLUDED.end_offset, r.end_offset) ELSE coalesce(r.end_offset, EXCLUDED.end_offset) END,
      latest_offset = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN coalesce(EXCLUDED.latest_offset, r.latest_offset) ELSE coalesce(r.latest_offset, EXCLUDED.latest_offset) END,
      event_time_max = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN coalesce(EXCLUDED.event_time_max, r.event_time_max) ELSE coalesce(r.event_time_max, EXCLUDED.event_time_max) END,
      last_data_at = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN coalesce(EXCLUDED.last_data_at, r.last_data_at) ELSE coalesce(r.last_data_at, EXCLUDED.last_data_at) END,
      idle = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN coalesce(EXCLUDED.idle, r.idle) ELSE coalesce(r.idle, EXCLUDED.idle) END;
END;
$$;

CREATE OR REPLACE FUNCTION sluice_rollup_batch(pv TEXT, bid BIGINT, at TIMESTAMPTZ, input INT, o JSONB, p JSONB) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM sluice_rollup_batch_at(10::smallint, pv, bid, at, input, o, p);
  PERFORM sluice_rollup_batch_at(60::smallint, pv, bid, at, input, o, p);
EXCEPTION WHEN others THEN
  -- Derived data: a progress record that cannot be read must never fail the batch's commit.
  RAISE WARNING 'batch % of pipeline version % not folded into the chart rollups: %', bid, pv, SQLERRM;
END;
$$;

-- The 60-second grain of the batches committed so far, and of the offset samples (each minute's first).
DO $$
BEGIN
  PERFORM sluice_rollup_batch_at(60::smallint, pipeline_version_id, batch_id, committed_at, input_rows, outcomes, progress)
     FROM batch_log ORDER BY pipeline_version_id, batch_id;
END;
$$;
INSERT INTO offset_samples (pipeline_version_id, grain_seconds, partition, bucket_start, sampled_at, latest_offset, committed_offset)
SELECT DISTINCT ON (pipeline_version_id, partition, date_bin('60 seconds', bucket_start, TIMESTAMPTZ '2000-01-01 00:00:00+00'))
       pipeline_version_id, 60, partition, date_bin('60 seconds', bucket_start, TIMESTAMPTZ '2000-01-01 00:00:00+00'), sampled_at, latest_offset, committed_offset
  FROM offset_samples WHERE grain_seconds = 10
 ORDER BY pipeline_version_id, partition, date_bin('60 seconds', bucket_start, TIMESTAMPTZ '2000-01-01 00:00:00+00'), sampled_at;
