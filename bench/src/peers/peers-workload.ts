// The topic every engine reads in a peers run, and its expected result recomputed in SQL from the
// raw records — independent of every engine's code.
//
// Lateness is made unambiguous so one expected result holds for every engine: when an event counts
// as late depends on when each engine's watermark moves (Sluice: per batch; Flink: continuously,
// per partition; Spark: per micro-batch, over all partitions), so the stream has no event near the
// 10-minute watermark delay. On-time events lag their partition by at most ~2 minutes (out of order,
// duplicates delayed); late ones are 40 minutes to 3 hours behind (the producer's `lateMinMs`), far
// past any engine's watermark once it has one. A warm-up prefix without late events covers the time
// before a first watermark exists (Sluice's first batch, Spark's first micro-batches, Flink's first
// periodic watermark): every engine accepts everything then. `ambiguous` counts the events between
// both bands; the run stops if there are any.
import type { Kafka } from "kafkajs";
import type pg from "pg";
import { producePayments, simulatedClock } from "@sluice/producer";
import { KafkaSource } from "@sluice/engine";

export const WATERMARK_DELAY_MINUTES = 10;
const ON_TIME_MAX_MINUTES = 3;
const LATE_MIN_MINUTES = 40;
const REF_CHUNK = 50_000;

export interface Workload {
  topic: string;
  messages: number;
  merchants: number;
  partitions: number;
  /** Messages before the first late event. */
  warmup: number;
  produceSeconds: number;
}

export async function produceWorkload(
  kafka: Kafka,
  o: { topic: string; messages: number; merchants: number; partitions: number; maxOffsets: number },
): Promise<Workload> {
  // Four batches' worth at least: Spark's late-row filter runs on a watermark that trails its
  // micro-batches (with two stateful operators, the one before the previous batch's), and a smoke run
  // with a two-batch warm-up had Spark accept an event 1 h 50 min late in its third micro-batch.
  const warmup = Math.min(
    Math.floor(o.messages / 2),
    Math.max(4 * o.maxOffsets, Math.floor(o.messages / 10)),
  );
  // One clock for both parts, so event time runs on from the warm-up (10 ms of event time a message).
  const clock = simulatedClock({ start: "2025-01-01T00:00:00Z", stepMs: 10 });
  const common = {
    topic: o.topic,
    kafka,
    partitions: o.partitions,
    merchants: o.merchants,
    clock,
    duplicateShare: 0.05,
    malformedShare: 0.01,
    outOfOrderShare: 0.05,
    manifest: "counts" as const,
    batchSize: 5000,
    log: () => undefined,
  };
  const started = performance.now();
  await producePayments({ ...common, count: warmup, seed: "peers-warmup" });
  await producePayments({
    ...common,
    count: o.messages - warmup,
    seed: "peers",
    lateShare: 0.01,
    lateMinMs: LATE_MIN_MINUTES * 60_000,
    lateMaxMs: 3 * 3_600_000,
  });
  return { ...o, warmup, produceSeconds: (performance.now() - started) / 1000 };
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function payloadOf(value: Buffer | null): unknown {
  if (!value) return null;
  try {
    const v: unknown = JSON.parse(utf8.decode(value));
    return v !== null && typeof v === "object" && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

/** Every record of the topic as (partition, offset, payload or null) in `peers_ref`. Returns the count. */
export async function loadReference(pool: pg.Pool, kafka: Kafka, topic: string): Promise<number> {
  await pool.query(`CREATE TABLE peers_ref (partition int, "offset" bigint, payload jsonb)`);
  const source = new KafkaSource({ kafka, topic, groupPrefix: "peers-ref" });
  let loaded = 0;
  try {
    for (const p of await source.partitionOffsets()) {
      for (let from = Number(p.low); from < Number(p.high); from += REF_CHUNK) {
        const to = Math.min(from + REF_CHUNK, Number(p.high));
        const records = await source.read([{ partition: p.partition, from, to }]);
        const rows = records.map((r) => [r.partition, Number(r.offset), payloadOf(r.value)]);
        await pool.query(
          `INSERT INTO peers_ref SELECT (r->>0)::int, (r->>1)::bigint, NULLIF(r->2, 'null'::jsonb) FROM jsonb_array_elements($1::jsonb) r`,
          [JSON.stringify(rows)],
        );
        loaded += rows.length;
      }
    }
  } finally {
    await source.close();
  }
  return loaded;
}

/** The contract's fields, typed as the settlements contract requires; anything else is malformed. */
const WELL_FORMED = `
  jsonb_typeof(p->'event_id') = 'string' AND jsonb_typeof(p->'type') = 'string'
  AND jsonb_typeof(p->'merchant_id') = 'string' AND jsonb_typeof(p->'currency') = 'string'
  AND jsonb_typeof(p->'event_time') = 'string' AND p->>'event_time' ~ '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?(Z|[+-]\\d\\d:\\d\\d)$'
  AND ((jsonb_typeof(p->'amount') = 'string' AND p->>'amount' ~ '^-?\\d+(\\.\\d+)?$') OR jsonb_typeof(p->'amount') = 'number')
  AND (coalesce(jsonb_typeof(p->'seq'), 'null') = 'null' OR (jsonb_typeof(p->'seq') = 'number' AND p->>'seq' ~ '^-?\\d+$'))
  AND coalesce(jsonb_typeof(p->'campaign'), 'null') IN ('null', 'string')`;

export interface Expected {
  windows: number;
  /** Well-formed events, and how they split. */
  events: number;
  accepted: number;
  late: number;
  ambiguous: number;
}

/**
 * `peers_expected`: the settlement windows every engine must write, from `peers_ref` alone — the
 * contract, `amount > 0`, settlements and refunds, not late (more than the on-time band behind the
 * newest event time read before it in its partition), first of each event id, 5-minute windows.
 */
export async function computeExpected(pool: pg.Pool): Promise<Expected> {
  await pool.query(`
    CREATE TABLE peers_events AS
    SELECT partition, "offset", p->>'event_id' AS event_id, p->>'type' AS type, p->>'merchant_id' AS merchant_id,
           (p->>'amount')::numeric AS amount, (p->>'event_time')::timestamptz AS event_time
      FROM peers_ref r, LATERAL (SELECT r.payload AS p) x
     WHERE p IS NOT NULL AND ${WELL_FORMED}`);
  await pool.query(`
    CREATE TABLE peers_judged AS
    SELECT *, max(event_time) OVER (PARTITION BY partition ORDER BY "offset" ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
              - event_time AS behind
      FROM peers_events`);
  await pool.query(`
    CREATE TABLE peers_expected AS
    WITH accepted AS (
      SELECT DISTINCT ON (event_id) * FROM peers_judged
       WHERE amount > 0 AND type IN ('settlement', 'refund') AND (behind IS NULL OR behind <= interval '${ON_TIME_MAX_MINUTES} minutes')
       ORDER BY event_id, partition, "offset")
    SELECT merchant_id, to_timestamp(floor(extract(epoch FROM event_time) / 300) * 300) AS window_start,
           to_timestamp(floor(extract(epoch FROM event_time) / 300) * 300 + 300) AS window_end,
           sum(amount) AS settled, coalesce(sum(amount) FILTER (WHERE type = 'refund'), 0) AS refunded, count(*)::bigint AS events
      FROM accepted GROUP BY 1, 2, 3`);
  await pool.query(`ALTER TABLE peers_expected ADD PRIMARY KEY (merchant_id, window_start)`);
  const r = await pool.query<Expected>(`
    SELECT (SELECT count(*) FROM peers_expected)::int AS windows,
           count(*)::int AS events,
           count(*) FILTER (WHERE behind IS NULL OR behind <= interval '${ON_TIME_MAX_MINUTES} minutes')::int AS accepted,
           count(*) FILTER (WHERE behind >= interval '${LATE_MIN_MINUTES} minutes')::int AS late,
           count(*) FILTER (WHERE behind > interval '${ON_TIME_MAX_MINUTES} minutes' AND behind < interval '${LATE_MIN_MINUTES} minutes')::int AS ambiguous
      FROM peers_judged`);
  return r.rows[0]!;
}

/** The sink table each engine writes: Sluice's columns for the settlements pipeline (Sluice adds its own metadata). */
export function createPeerSinkSql(table: string): string {
  return `CREATE TABLE ${table} (merchant_id text NOT NULL, window_start timestamptz NOT NULL, window_end timestamptz NOT NULL,
            settled numeric NOT NULL, refunded numeric, events bigint NOT NULL, PRIMARY KEY (merchant_id, window_start))`;
}
