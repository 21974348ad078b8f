-- CreateTable
CREATE TABLE "batch_rollup" (
    "pipeline_version_id" TEXT NOT NULL,
    "bucket_start" TIMESTAMPTZ(3) NOT NULL,
    "batches" INTEGER NOT NULL,
    "first_batch_id" BIGINT NOT NULL,
    "last_batch_id" BIGINT NOT NULL,
    "last_committed_at" TIMESTAMPTZ(3) NOT NULL,
    "input_rows" BIGINT NOT NULL,
    "sink" BIGINT NOT NULL,
    "duplicate" BIGINT NOT NULL,
    "filtered" BIGINT NOT NULL,
    "quarantined" BIGINT NOT NULL,
    "dead_letter" BIGINT NOT NULL,
    "late" BIGINT NOT NULL,
    "stale" BIGINT NOT NULL,
    "dropped" BIGINT NOT NULL,
    "unbalanced" INTEGER NOT NULL,
    "plan_ms" BIGINT NOT NULL,
    "read_ms" BIGINT NOT NULL,
    "process_ms" BIGINT NOT NULL,
    "commit_ms" BIGINT NOT NULL,
    "total_ms" BIGINT NOT NULL,
    "latency_p50" INTEGER,
    "latency_p95" INTEGER,
    "latency_p99" INTEGER,
    "state_rows" BIGINT NOT NULL,
    "state_bytes" BIGINT NOT NULL,
    "watermark" TIMESTAMPTZ(3),
    "event_time_max" TIMESTAMPTZ(3),
    "ingest_time_max" TIMESTAMPTZ(3),
    "violations" JSONB NOT NULL DEFAULT '{}',
    "dropped_by" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "batch_rollup_pkey" PRIMARY KEY ("pipeline_version_id","bucket_start")
);

-- CreateTable
CREATE TABLE "partition_rollup" (
    "pipeline_version_id" TEXT NOT NULL,
    "partition" INTEGER NOT NULL,
    "bucket_start" TIMESTAMPTZ(3) NOT NULL,
    "last_batch_id" BIGINT NOT NULL,
    "last_committed_at" TIMESTAMPTZ(3) NOT NULL,
    "rows_read" BIGINT NOT NULL,
    "end_offset" BIGINT,
    "latest_offset" BIGINT,
    "event_time_max" TIMESTAMPTZ(3),
    "last_data_at" TIMESTAMPTZ(3),
    "idle" BOOLEAN,

    CONSTRAINT "partition_rollup_pkey" PRIMARY KEY ("pipeline_version_id","bucket_start","partition")
);

-- CreateTable
CREATE TABLE "offset_samples" (
    "pipeline_version_id" TEXT NOT NULL,
    "partition" INTEGER NOT NULL,
    "bucket_start" TIMESTAMPTZ(3) NOT NULL,
    "sampled_at" TIMESTAMPTZ(3) NOT NULL,
    "latest_offset" BIGINT NOT NULL,
    "committed_offset" BIGINT,

    CONSTRAINT "offset_samples_pkey" PRIMARY KEY ("pipeline_version_id","bucket_start","partition")
);

-- CreateIndex
CREATE INDEX "offset_samples_bucket_start_idx" ON "offset_samples"("bucket_start");


-- Folding a committed batch into its 10-second buckets. Called by the trigger below inside the batch's
-- own commit transaction (so a bucket is never behind batch_log), and once here for the batches
-- already committed. The rollups are derived data: a malformed progress record is skipped with a
-- warning instead of failing the commit (the batch itself must never be refused because of a chart).
CREATE FUNCTION sluice_rollup_batch(pv TEXT, bid BIGINT, at TIMESTAMPTZ, input INT, o JSONB, p JSONB) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  bucket TIMESTAMPTZ := date_bin('10 seconds', at, TIMESTAMPTZ '2000-01-01 00:00:00+00');
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

  INSERT INTO batch_rollup AS r (pipeline_version_id, bucket_start, batches, first_batch_id, last_batch_id, last_committed_at,
      input_rows, sink, duplicate, filtered, quarantined, dead_letter, late, stale, dropped, unbalanced,
      plan_ms, read_ms, process_ms, commit_ms, total_ms, latency_p50, latency_p95, latency_p99,
      state_rows, state_bytes, watermark, event_time_max, ingest_time_max, violations, dropped_by)
  VALUES (pv, bucket, 1, bid, bid, at,
      input, coalesce((o->>'sink')::bigint, 0), coalesce((o->>'duplicate')::bigint, 0), coalesce((o->>'filtered')::bigint, 0),
      coalesce((o->>'quarantined')::bigint, 0), coalesce((o->>'deadLetter')::bigint, 0), coalesce((o->>'late')::bigint, 0),
      coalesce((o->>'stale')::bigint, 0), num_dropped, CASE WHEN total = input THEN 0 ELSE 1 END,
      coalesce((d->>'plan')::bigint, 0), coalesce((d->>'read')::bigint, 0), coalesce((d->>'process')::bigint, 0),
      coalesce((d->>'commit')::bigint, 0), coalesce((d->>'total')::bigint, 0),
      (l->>'p50')::int, (l->>'p95')::int, (l->>'p99')::int,
      coalesce((p->>'stateRows')::bigint, 0), coalesce((p->>'stateBytes')::bigint, 0),
      (p->>'watermark')::timestamptz, (p->>'eventTimeMax')::timestamptz, (p->>'ingestTimeMax')::timestamptz, v, dr)
  ON CONFLICT (pipeline_version_id, bucket_start) DO UPDATE SET
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

  INSERT INTO partition_rollup AS r (pipeline_version_id, partition, bucket_start, last_batch_id, last_committed_at, rows_read,
      end_offset, latest_offset, event_time_max, last_data_at, idle)
  SELECT pv, coalesce(s.partition, c.partition), bucket, bid, at, coalesce(s.end_offset - s.start_offset, 0),
         s.end_offset, s.latest_offset, c.event_time_max, c.last_data_at, c.idle
    FROM (SELECT (e->>'partition')::int AS partition, (e->>'startOffset')::bigint AS start_offset, (e->>'endOffset')::bigint AS end_offset,
                 (e->>'latestOffset')::bigint AS latest_offset
            FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p->'sources') = 'array' THEN p->'sources' ELSE '[]' END) e) s
    FULL JOIN (SELECT (e->>'partition')::int AS partition, (e->>'eventTimeMax')::timestamptz AS event_time_max,
                      (e->>'lastDataAt')::timestamptz AS last_data_at, (e->>'idle')::boolean AS idle
                 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p->'partitionEventTime') = 'array' THEN p->'partitionEventTime' ELSE '[]' END) e) c
      ON c.partition = s.partition
  ON CONFLICT (pipeline_version_id, bucket_start, partition) DO UPDATE SET
      rows_read = r.rows_read + EXCLUDED.rows_read,
      last_batch_id = greatest(r.last_batch_id, EXCLUDED.last_batch_id),
      last_committed_at = greatest(r.last_committed_at, EXCLUDED.last_committed_at),
      end_offset = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN coalesce(EXCLUDED.end_offset, r.end_offset) ELSE coalesce(r.end_offset, EXCLUDED.end_offset) END,
      latest_offset = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN coalesce(EXCLUDED.latest_offset, r.latest_offset) ELSE coalesce(r.latest_offset, EXCLUDED.latest_offset) END,
      event_time_max = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN coalesce(EXCLUDED.event_time_max, r.event_time_max) ELSE coalesce(r.event_time_max, EXCLUDED.event_time_max) END,
      last_data_at = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN coalesce(EXCLUDED.last_data_at, r.last_data_at) ELSE coalesce(r.last_data_at, EXCLUDED.last_data_at) END,
      idle = CASE WHEN EXCLUDED.last_batch_id > r.last_batch_id THEN coalesce(EXCLUDED.idle, r.idle) ELSE coalesce(r.idle, EXCLUDED.idle) END;
EXCEPTION WHEN others THEN
  RAISE WARNING 'batch % of pipeline version % not folded into the chart rollups: %', bid, pv, SQLERRM;
END;
$$;

CREATE FUNCTION sluice_batch_log_rollup() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM sluice_rollup_batch(NEW.pipeline_version_id, NEW.batch_id, NEW.committed_at, NEW.input_rows, NEW.outcomes, NEW.progress);
  RETURN NULL;
END;
$$;

CREATE TRIGGER batch_log_rollup AFTER INSERT ON batch_log FOR EACH ROW EXECUTE FUNCTION sluice_batch_log_rollup();

-- The batches committed before this migration (in a DO block: a migration's statements return no rows).
DO $$
BEGIN
  PERFORM sluice_rollup_batch(pipeline_version_id, batch_id, committed_at, input_rows, outcomes, progress)
     FROM batch_log ORDER BY pipeline_version_id, batch_id;
END;
$$;
