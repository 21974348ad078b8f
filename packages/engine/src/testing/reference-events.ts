// Independent reference data for result checks: every record of a topic read back from Kafka into a
// plain table (ref_events), and the batches a pipeline committed (ref_batches), so a test can compute
// the expected result with one SQL query and compare it to the sink exactly.
import type { Kafka } from "kafkajs";
import type pg from "pg";
import { expect } from "vitest";
import { KafkaSource } from "../source/kafka-source";
import { bulkSelect } from "../store/bulk";

/** Loads the topic's payment events: one row per record, duplicates included. Returns the row count. */
export async function loadReferenceEvents(
  pool: pg.Pool,
  kafka: Kafka,
  topic: string,
  table = "ref_events",
): Promise<number> {
  const source = new KafkaSource({ kafka, topic, groupPrefix: `ref-${table}` });
  try {
    const partitions = await source.partitionOffsets();
    const records = await source.read(
      partitions.map((p) => ({ partition: p.partition, from: p.low, to: p.high })),
    );
    const rows = records.map((r) => ({
      r,
      v: JSON.parse(r.value!.toString("utf8")) as Record<string, unknown>,
    }));
    await pool.query(`DROP TABLE IF EXISTS ${table}`);
    await pool.query(
      `CREATE TABLE ${table} (partition int, "offset" bigint, payload jsonb, event_id text, type text, merchant_id text, customer_id text, amount numeric, event_time timestamptz)`,
    );
    const { sql, params } = bulkSelect([
      { name: "partition", sqlType: "integer", values: rows.map((x) => x.r.partition) },
      { name: "offset", sqlType: "bigint", values: rows.map((x) => x.r.offset) },
      { name: "payload", sqlType: "jsonb", values: rows.map((x) => x.v) },
    ]);
    await pool.query(
      `INSERT INTO ${table} SELECT u.partition, u."offset", u.payload, u.payload->>'event_id', u.payload->>'type', u.payload->>'merchant_id',
              u.payload->>'customer_id', (u.payload->>'amount')::numeric, (u.payload->>'event_time')::timestamptz
         FROM (${sql}) AS u (partition, "offset", payload)`,
      params,
    );
    await pool.query(`CREATE INDEX ON ${table} (partition, "offset")`);
    await pool.query(`ANALYZE ${table}`);
    return rows.length;
  } finally {
    await source.close();
  }
}

/** The committed batches of a pipeline version and the offset range each read, from its offset log. */
export async function loadReferenceBatches(
  pool: pg.Pool,
  pipelineVersionIds: string[],
  table = "ref_batches",
): Promise<void> {
  await pool.query(`DROP TABLE IF EXISTS ${table}`);
  await pool.query(
    `CREATE TABLE ${table} AS
     SELECT o.batch_id, (r->>'partition')::int AS partition, (r->>'from')::bigint AS "from", (r->>'to')::bigint AS "to"
       FROM offset_log o JOIN batch_log b USING (pipeline_version_id, batch_id), jsonb_array_elements(o.ranges) r
      WHERE o.pipeline_version_id = ANY($1)`,
    [pipelineVersionIds],
  );
}

/**
 * The batches in ref_batches read every offset of the topic exactly once: per partition they follow
 * each other from offset 0 to the topic's end (so a recomputation over them covers every event).
 */
export async function expectBatchesCoverTopic(
  pool: pg.Pool,
  kafka: Kafka,
  topic: string,
  table = "ref_batches",
): Promise<void> {
  const ranges = await pool.query<{ partition: number; from: string; to: string }>(
    `SELECT partition, "from", "to" FROM ${table} WHERE "to" > "from" ORDER BY partition, "from"`,
  );
  const next = new Map<number, number>();
  for (const r of ranges.rows) {
    expect({ partition: r.partition, from: Number(r.from) }).toEqual({
      partition: r.partition,
      from: next.get(r.partition) ?? 0,
    });
    next.set(r.partition, Number(r.to));
  }
  const admin = kafka.admin();
  await admin.connect();
  const high = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
  // A partition that never had a record is read by no batch.
  expect(Object.fromEntries(next)).toEqual(
    Object.fromEntries(high.filter((h) => Number(h.high) > 0).map((h) => [h.partition, Number(h.high)])),
  );
}

/**
 * A SQL fragment: `ref_judged`, every reference event with the batch that read it and the watermark
 * that batch used — recomputed from the raw events: per partition the max event time read up to each
 * batch, the minimum over partitions minus the delay, never moving back (no partition idles in tests).
 */
export function judgedEventsSql(delayMs: number, events = "ref_events", batches = "ref_batches"): string {
  return `
  ref_ends AS (
    SELECT b.batch_id, p.partition, max(b2."to") AS end_offset
      FROM (SELECT DISTINCT batch_id FROM ${batches}) b
      CROSS JOIN (SELECT DISTINCT partition FROM ${batches}) p
      JOIN ${batches} b2 ON b2.partition = p.partition AND b2.batch_id <= b.batch_id
     GROUP BY 1, 2),
  ref_cummax AS (
    SELECT e.batch_id, e.partition, max(r.event_time) AS m
      FROM ref_ends e JOIN ${events} r ON r.partition = e.partition AND r."offset" < e.end_offset GROUP BY 1, 2),
  ref_wm AS (
    SELECT batch_id, max(c) OVER (ORDER BY batch_id) AS w
      FROM (SELECT batch_id, min(m) - make_interval(secs => ${delayMs / 1000}) AS c FROM ref_cummax GROUP BY batch_id) x),
  ref_judged AS (
    SELECT r.*, b.batch_id, wm.w AS prev_watermark
      FROM ${events} r JOIN ${batches} b ON b.partition = r.partition AND r."offset" >= b."from" AND r."offset" < b."to"
      LEFT JOIN ref_wm wm ON wm.batch_id = b.batch_id - 1)`;
}
