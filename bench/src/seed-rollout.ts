// A pipeline in a running blue/green rollout whose two physical sink tables hold N rows each, for the
// rollout benchmark (rollout-reconciliation.ts). Blue is registered and serves (registerPipelineVersion:
// its table and the serving view); green is started by the real startRollout (a candidate from the
// topic's earliest offsets, its own table). Both tables are then filled set-based (INSERT … SELECT over
// generate_series), with the records a reconciliation reads written as the engine would have left them
// after both caught up: checkpoints (end offsets, every window final), offset_log (where each started)
// and batch_log (the progress records the outcome counts come from).
//
// The rows: slots 0…N−1 are blue's. A seeded hash picks about 0.1% of them that green lacks (only in
// blue) and 0.1% whose values green holds differently (differing); green also holds as many slots after
// N that blue lacks (only in green), so each table holds exactly N rows. Windows: slot s is merchant
// s mod M, window s div M; ledger: event s, at partition s mod 3, offset s div 3.
import { readFile } from "node:fs/promises";
import type { Kafka } from "kafkajs";
import type pg from "pg";
import type { PrismaClient } from "@sluice/db";
import { physicalSql, registerPipelineVersion } from "@sluice/engine";
import { parseSpecOrThrow, validateSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import { kafkaTopicOffsets, startRollout } from "@sluice/services";

export const PARTITIONS = 3;
/** Offsets per batch in the progress records: the ledger example's maxOffsetsPerTrigger. */
const BATCH = 20_000;
const MERCHANTS = 2000;
const WINDOW_MS = 5 * 60_000;
const BASE = "2026-11-01T00:00:00Z";
const SEED = 20;
/** 0: green lacks the slot (only in blue); 1: green's values differ. Over `s`, a bigint slot. */
const PICK = `abs(hashint8extended(s, ${SEED})) % 1000`;
const DIFFERS = `CASE WHEN d THEN 1 + s % 97 ELSE 0 END`;
const EVENT_TIME = `timestamptz '${BASE}' + s * interval '50 milliseconds'`;

export const OWNER = {
  actorUserId: "bench-owner",
  actor: "owner@bench.local",
  from: { origin: "cli" as const },
};

export interface TRolloutShape {
  /** packages/pipeline-spec/examples/<example>.yaml */
  example: string;
  label: string;
  /** The physical table's columns for slot `s` (bigint), `d` (green's differing values), `v` (version id, topic). */
  columns: Record<string, string>;
  /** Where every window is final: the watermark both checkpoints hold, after `slots` slots. */
  watermark(slots: number): Date;
}

export const SETTLEMENTS: TRolloutShape = {
  example: "merchant-settlements",
  label: "windows (merchant × 5-minute window: settled, refunded, events)",
  columns: {
    merchant_id: `'m-' || lpad((s % ${MERCHANTS})::text, 5, '0')`,
    window_start: `timestamptz '${BASE}' + (s / ${MERCHANTS}) * interval '5 minutes'`,
    window_end: `timestamptz '${BASE}' + (s / ${MERCHANTS} + 1) * interval '5 minutes'`,
    events: `1 + abs(hashint8extended(s, 11)) % 400`,
    settled: `round((abs(hashint8extended(s, 12)) % 100000000)::numeric / 100, 2) + ${DIFFERS}`,
    refunded: `round((abs(hashint8extended(s, 13)) % 1000000)::numeric / 100, 2)`,
    _batch_id: `s / ${BATCH}`,
    _pipeline_version: "v.version",
  },
  watermark: (slots) => new Date(Date.parse(BASE) + (Math.ceil(slots / MERCHANTS) + 1) * WINDOW_MS),
};

export const LEDGER: TRolloutShape = {
  example: "payments-ledger",
  label: "ledger (one row per event id)",
  columns: {
    event_id: `'evt-' || lpad(s::text, 10, '0')`,
    type: `(ARRAY['authorization', 'settlement', 'refund', 'dispute'])[(1 + s % 4)::int]`,
    merchant_id: `'m-' || lpad((s % ${MERCHANTS})::text, 5, '0')`,
    seq: `s % 4`,
    payment_id: `'pay-' || s / 4`,
    customer_id: `'cus-' || abs(hashint8extended(s, 21)) % 50000`,
    amount: `round((abs(hashint8extended(s, 22)) % 10000000)::numeric / 100, 2) + ${DIFFERS}`,
    currency: `(ARRAY['USD', 'EUR', 'GBP'])[(1 + s % 3)::int]`,
    card_country: `CASE WHEN s % 10 = 0 THEN NULL ELSE (ARRAY['US', 'DE', 'GB', 'FR', 'NL'])[(1 + s % 5)::int] END`,
    event_time: EVENT_TIME,
    _topic: "v.topic",
    _partition: `(s % ${PARTITIONS})::int`,
    _offset: `s / ${PARTITIONS}`,
    _ingest_time: `${EVENT_TIME} + interval '2 seconds'`,
    _batch_id: `s / ${BATCH}`,
    _pipeline_version: "v.version",
  },
  watermark: (slots) => new Date(Date.parse(BASE) + slots * 50 + 3_600_000),
};

export interface TSeededSide {
  pipelineVersionId: string;
  /** The physical table, in the sinks schema. */
  physical: string;
}

export interface TSeededRollout {
  pipeline: string;
  /** The spec's table name: the serving view readers query. */
  servingName: string;
  blue: TSeededSide;
  green: TSeededSide;
  rows: number;
  /** The sink's key columns. */
  key: string[];
  /** The differences seeded, which a reconciliation must find exactly. */
  expected: { onlyBlue: number; onlyGreen: number; differing: number; matching: number };
  fillMs: number;
}

export async function seedRollout(
  pool: pg.Pool,
  db: PrismaClient,
  kafka: Kafka,
  shape: TRolloutShape,
  opts: { topic: string; rows: number },
): Promise<TSeededRollout> {
  const example = parseSpecOrThrow(
    await readFile(
      new URL(`../../packages/pipeline-spec/examples/${shape.example}.yaml`, import.meta.url),
      "utf8",
    ),
  );
  const blueSpec = specFor(example, opts.topic, []);
  // Green's change keeps every result the same: a warn expectation flags large amounts and drops nothing.
  const greenSpec = specFor(example, opts.topic, [
    { name: "large_amount", expr: "amount < 1000000", action: "warn" },
  ]);
  const table = blueSpec.sink!.postgres!.table;
  const n = opts.rows;

  const picks = (
    await pool.query<{ only_blue: number; differing: number }>(
      `SELECT count(*) FILTER (WHERE pick = 0)::int AS only_blue, count(*) FILTER (WHERE pick = 1)::int AS differing
         FROM generate_series(0::bigint, $1::bigint - 1) s, LATERAL (SELECT ${PICK} AS pick) p`,
      [n],
    )
  ).rows[0]!;
  const slots = n + picks.only_blue;
  const expected = {
    onlyBlue: picks.only_blue,
    onlyGreen: picks.only_blue,
    differing: picks.differing,
    matching: n - picks.only_blue - picks.differing,
  };

  const started = performance.now();
  const blue = await registerPipelineVersion(pool, blueSpec, { registeredBy: "bench", reason: "blue" });
  await pool.query(
    `INSERT INTO pipeline_runs (pipeline_version_id, status, desired_state) VALUES ($1, 'running', 'running')`,
    [blue.pipelineVersionId],
  );
  const rollout = await startRollout(db, kafkaTopicOffsets(kafka), OWNER, greenSpec, {
    from: { kind: "earliest" },
    reason: "flag large amounts (benchmark)",
  });
  const sides = { blue: blue.pipelineVersionId, green: rollout.green.pipelineVersionId };
  const tables = await pool.query<{ id: string; sink_tables: Record<string, string> }>(
    `SELECT id, sink_tables FROM pipeline_versions WHERE id = ANY($1::text[])`,
    [Object.values(sides)],
  );
  const physicalOf = (id: string) => Object.values(tables.rows.find((r) => r.id === id)!.sink_tables)[0]!;
  const watermark = shape.watermark(slots);
  for (const side of ["blue", "green"] as const) {
    // Which slots the side holds: blue slots 0…N−1; green those it has of them, and the ones after N.
    const holds = side === "blue" ? `s < ${n}` : `s >= ${n} OR pick <> 0`;
    const ctx = `generate_series(0::bigint, ${slots - 1}) s, LATERAL (SELECT ${PICK} AS pick) p`;
    const names = Object.keys(shape.columns);
    await pool.query(
      `INSERT INTO ${physicalSql(physicalOf(sides[side]))} (${names.map((c) => `"${c}"`).join(", ")})
       SELECT ${Object.values(shape.columns).join(", ")}
         FROM (SELECT $1::text AS version, $2::text AS topic) v, ${ctx},
              LATERAL (SELECT ${side === "green" ? `pick = 1 AND s < ${n}` : "false"} AS d) dd
        WHERE ${holds}`,
      [sides[side], opts.topic],
    );
    await writeProgress(pool, sides[side], { ctx, holds, slots, watermark });
  }
  await pool.query(
    `VACUUM ANALYZE ${physicalSql(physicalOf(sides.blue))}, ${physicalSql(physicalOf(sides.green))}`,
  );
  return {
    pipeline: blueSpec.name,
    servingName: table,
    blue: { pipelineVersionId: sides.blue, physical: physicalOf(sides.blue) },
    green: { pipelineVersionId: sides.green, physical: physicalOf(sides.green) },
    rows: n,
    key: blueSpec.sink!.postgres!.key ?? [],
    expected,
    fillMs: performance.now() - started,
  };
}

function specFor(example: TPipelineSpec, topic: string, extra: Record<string, string>[]): TPipelineSpec {
  const checked = validateSpec({
    ...example,
    source: { kafka: { ...example.source.kafka, topic } },
    expectations: [...(example.expectations ?? []), ...extra],
  });
  if (!checked.ok) throw new Error(checked.errors.map((e) => `${e.path}: ${e.message}`).join("; "));
  return checked.spec;
}

/**
 * A side's batches, as its runner would have committed them reading every slot's offsets: one
 * offset_log and batch_log row per BATCH slots (its sources per partition, rows read and written),
 * and the checkpoint after the last of them.
 */
async function writeProgress(
  pool: pg.Pool,
  pipelineVersionId: string,
  o: { ctx: string; holds: string; slots: number; watermark: Date },
): Promise<void> {
  // Slots lo…hi−1 of a batch: on partition p, offsets ceil((lo − p) / 3) up to ceil((hi − p) / 3).
  const sources = (as: string) =>
    `(SELECT jsonb_agg(jsonb_build_object('partition', p, '${as === "range" ? "from" : "startOffset"}', (lo - p + ${PARTITIONS - 1}) / ${PARTITIONS},
              '${as === "range" ? "to" : "endOffset"}', (hi - p + ${PARTITIONS - 1}) / ${PARTITIONS}) ORDER BY p) FROM generate_series(0, ${PARTITIONS - 1}) p)`;
  await pool.query(
    `WITH batches AS (
       SELECT s / ${BATCH} AS b, min(s) AS lo, max(s) + 1 AS hi, count(*)::int AS input,
              (count(*) FILTER (WHERE ${o.holds}))::int AS sink
         FROM ${o.ctx} GROUP BY 1),
     planned AS (
       INSERT INTO offset_log (pipeline_version_id, batch_id, ranges) SELECT $1, b, ${sources("range")} FROM batches)
     INSERT INTO batch_log (pipeline_version_id, batch_id, committed_at, input_rows, sink_rows, outcomes, progress)
     SELECT $1, b, now(), input, sink, o.outcomes,
            jsonb_build_object('batchId', b, 'inputRows', input, 'sources', ${sources("progress")}, 'outcomes', o.outcomes,
                               'expectations', '{}'::jsonb, 'watermark', to_jsonb($2::timestamptz), 'eventTimeMax', to_jsonb($2::timestamptz))
       FROM batches, LATERAL (SELECT jsonb_build_object('sink', sink, 'filtered', input - sink) AS outcomes) o`,
    [pipelineVersionId, o.watermark],
  );
  const ends = Object.fromEntries(
    Array.from({ length: PARTITIONS }, (_, p) => [String(p), Math.floor((o.slots - 1 - p) / PARTITIONS) + 1]),
  );
  await pool.query(
    `UPDATE checkpoints SET last_batch_id = $2, end_offsets = $3::jsonb, watermark = $4,
            event_time_max = jsonb_build_object('eventTime', $4::timestamptz), updated_at = now()
      WHERE pipeline_version_id = $1`,
    [pipelineVersionId, Math.ceil(o.slots / BATCH) - 1, JSON.stringify(ends), o.watermark],
  );
}
