// A join's state in Postgres: the dimension's versions (join_versions) and the rows waiting for it
// (join_held). Read before the commit, written inside the batch transaction with everything else.
// In partition groups each group owns the waiting rows of its partitions (partition mod N): it alone
// holds and releases them.
import type pg from "pg";
import { bulkSelect } from "../store/bulk";
import type { PartitionGroup } from "../store/partition-group";
import type { StateDelta } from "../operator/result-operator";
import { versionBytes, type DimensionVersion } from "./dimension-versions";

export async function loadVersions(
  db: pg.Pool,
  pv: string,
  keys: string[],
): Promise<Map<string, DimensionVersion[]>> {
  const out = new Map<string, DimensionVersion[]>();
  if (keys.length === 0) return out;
  const res = await db.query<{
    entity_key: string;
    valid_from: Date;
    sequence: string | null;
    deleted: boolean;
    values: Record<string, unknown>;
  }>(
    `SELECT entity_key, valid_from, sequence #>> '{}' AS sequence, deleted, "values" FROM join_versions
      WHERE pipeline_version_id = $1 AND entity_key = ANY($2::text[]) ORDER BY entity_key, valid_from`,
    [pv, keys],
  );
  for (const r of res.rows) {
    let list = out.get(r.entity_key);
    if (!list) out.set(r.entity_key, (list = []));
    list.push({
      validFromMs: r.valid_from.getTime(),
      sequence: r.sequence,
      deleted: r.deleted,
      values: r.values,
    });
  }
  return out;
}

/** Inserts new versions and replaces those a change with the same event time superseded. */
export async function writeVersions(
  client: pg.PoolClient,
  pv: string,
  added: { entityKey: string; version: DimensionVersion }[],
  replaced: { entityKey: string; before: DimensionVersion; version: DimensionVersion }[],
): Promise<StateDelta> {
  const all = [...added, ...replaced];
  if (all.length === 0) return { rows: 0, bytes: 0 };
  const { sql, params } = bulkSelect(
    [
      { name: "entity_key", sqlType: "text", values: all.map((v) => v.entityKey) },
      { name: "valid_from", sqlType: "timestamptz", values: all.map((v) => new Date(v.version.validFromMs)) },
      { name: "sequence", sqlType: "jsonb", values: all.map((v) => v.version.sequence) },
      { name: "deleted", sqlType: "boolean", values: all.map((v) => v.version.deleted) },
      { name: "values", sqlType: "jsonb", values: all.map((v) => v.version.values) },
      { name: "bytes", sqlType: "integer", values: all.map((v) => versionBytes(v.entityKey, v.version)) },
    ],
    2,
  );
  await client.query(
    `INSERT INTO join_versions (pipeline_version_id, entity_key, valid_from, sequence, deleted, "values", bytes)
     SELECT $1, * FROM (${sql}) AS u
     ON CONFLICT (pipeline_version_id, entity_key, valid_from) DO UPDATE
        SET sequence = EXCLUDED.sequence, deleted = EXCLUDED.deleted, "values" = EXCLUDED."values", bytes = EXCLUDED.bytes`,
    [pv, ...params],
  );
  let bytes = 0;
  for (const v of added) bytes += versionBytes(v.entityKey, v.version);
  for (const v of replaced)
    bytes += versionBytes(v.entityKey, v.version) - versionBytes(v.entityKey, v.before);
  return { rows: added.length, bytes };
}

/**
 * Evicts the versions no row still to come can be valid at: those a later version of their key
 * replaced at or before `horizon` (rows before the horizon are late and never reach the join).
 */
export async function evictVersions(client: pg.PoolClient, pv: string, horizon: Date): Promise<StateDelta> {
  const res = await client.query<{ n: string; bytes: string }>(
    `WITH gone AS (
       DELETE FROM join_versions v
        WHERE v.pipeline_version_id = $1 AND v.valid_from < $2
          AND EXISTS (SELECT 1 FROM join_versions n WHERE n.pipeline_version_id = v.pipeline_version_id
                         AND n.entity_key = v.entity_key AND n.valid_from > v.valid_from AND n.valid_from <= $2)
       RETURNING bytes)
     SELECT count(*) AS n, coalesce(sum(bytes), 0) AS bytes FROM gone`,
    [pv, horizon],
  );
  return { rows: Number(res.rows[0]!.n), bytes: Number(res.rows[0]!.bytes) };
}

/** A row waiting for the dimension, as join_held stores it. */
export interface HeldRow {
  partition: number;
  offset: number;
  entityKey: string | null;
  eventMs: number;
  /** The row after the contract (JSON: timestamps ISO text), its rescued fields and Kafka timestamp and key. */
  row: {
    values: Record<string, unknown>;
    rescued: Record<string, unknown> | null;
    ingestTimeMs: number;
    key: string | null;
  };
  raw: Buffer;
  /** As stored (a row read back from join_held): what it counted in state. */
  bytes?: number;
}

const heldBytes = (h: HeldRow) => h.bytes ?? Buffer.byteLength(JSON.stringify(h.row)) + h.raw.length + 24;

/** SQL: the rows are the group's ($4 its number, $5 the count), or any row when $4 is null. */
const OWN_ROWS = `($4::int IS NULL OR partition % $5::int = $4::int)`;
/** SQL: released — the dimension's watermark passed it ($2) or the source is waitFor past it ($3). */
const RELEASED = `(event_time < coalesce($2, '-infinity'::timestamptz) OR event_time <= coalesce($3, '-infinity'::timestamptz))`;
const groupParams = (group: PartitionGroup | undefined) => [group?.no ?? null, group?.of ?? null];

/**
 * The held rows the dimension or the bound releases now: the dimension's watermark passed their
 * event time (before `confirmedBefore`), or the source's event time is waitFor past it (at or before
 * `expiredBy`) — a partition group's own rows only. Also the earliest event time among the rows that stay.
 */
export async function loadReleasable(
  db: pg.Pool,
  pv: string,
  confirmedBefore: Date | null,
  expiredBy: Date | null,
  group?: PartitionGroup,
): Promise<{ released: HeldRow[]; staysMinMs: number | null }> {
  const params = [pv, confirmedBefore, expiredBy, ...groupParams(group)];
  const res = await db.query<{
    partition: number;
    offset: string;
    entity_key: string | null;
    event_time: Date;
    row: HeldRow["row"];
    raw: Buffer;
    bytes: number;
  }>(
    `SELECT partition, "offset", entity_key, event_time, row, raw, bytes FROM join_held
      WHERE pipeline_version_id = $1 AND ${RELEASED} AND ${OWN_ROWS}
      ORDER BY event_time, partition, "offset"`,
    params,
  );
  const stays = await db.query<{ min: Date | null }>(
    `SELECT min(event_time) AS min FROM join_held
      WHERE pipeline_version_id = $1 AND NOT ${RELEASED} AND ${OWN_ROWS}`,
    params,
  );
  return {
    released: res.rows.map((r) => ({
      partition: r.partition,
      offset: Number(r.offset),
      entityKey: r.entity_key,
      eventMs: r.event_time.getTime(),
      row: r.row,
      raw: r.raw,
      bytes: r.bytes,
    })),
    staysMinMs: stays.rows[0]!.min?.getTime() ?? null,
  };
}

/** A partition group has waiting rows the dimension or the bound releases now (a batch should run for them). */
export async function hasReleasable(
  db: pg.Pool,
  pv: string,
  confirmedBefore: Date | null,
  expiredBy: Date | null,
  group: PartitionGroup,
): Promise<boolean> {
  const res = await db.query(
    `SELECT 1 FROM join_held WHERE pipeline_version_id = $1 AND ${RELEASED} AND ${OWN_ROWS} LIMIT 1`,
    [pv, confirmedBefore, expiredBy, ...groupParams(group)],
  );
  return (res.rowCount ?? 0) > 0;
}

/** The earliest event time among the other groups' waiting rows (in a group's commit, under the version's lock). */
export async function othersHeldMinMs(
  client: pg.PoolClient,
  pv: string,
  group: PartitionGroup,
): Promise<number | null> {
  const res = await client.query<{ min: Date | null }>(
    `SELECT min(event_time) AS min FROM join_held WHERE pipeline_version_id = $1 AND partition % $3::int <> $2::int`,
    [pv, group.no, group.of],
  );
  return res.rows[0]!.min?.getTime() ?? null;
}

export async function writeHeld(
  client: pg.PoolClient,
  pv: string,
  batchId: number,
  held: HeldRow[],
  released: HeldRow[],
): Promise<StateDelta> {
  const delta: StateDelta = { rows: 0, bytes: 0 };
  if (released.length > 0) {
    const res = await client.query<{ n: string; bytes: string }>(
      `WITH gone AS (DELETE FROM join_held WHERE pipeline_version_id = $1
                       AND (partition, "offset") IN (SELECT * FROM unnest($2::int[], $3::bigint[])) RETURNING bytes)
       SELECT count(*) AS n, coalesce(sum(bytes), 0) AS bytes FROM gone`,
      [pv, released.map((r) => r.partition), released.map((r) => r.offset)],
    );
    delta.rows -= Number(res.rows[0]!.n);
    delta.bytes -= Number(res.rows[0]!.bytes);
  }
  if (held.length > 0) {
    const { sql, params } = bulkSelect(
      [
        { name: "partition", sqlType: "integer", values: held.map((h) => h.partition) },
        { name: "offset", sqlType: "bigint", values: held.map((h) => h.offset) },
        { name: "entity_key", sqlType: "text", values: held.map((h) => h.entityKey) },
        { name: "event_time", sqlType: "timestamptz", values: held.map((h) => new Date(h.eventMs)) },
        { name: "row", sqlType: "jsonb", values: held.map((h) => h.row) },
        { name: "raw", sqlType: "bytea", values: held.map((h) => h.raw) },
        { name: "bytes", sqlType: "integer", values: held.map(heldBytes) },
      ],
      3,
    );
    // A row held again (re-read after a checkpoint reset, without dedupe) keeps its one place.
    const res = await client.query<{ n: string; bytes: string }>(
      `WITH ins AS (INSERT INTO join_held (pipeline_version_id, held_batch_id, partition, "offset", entity_key, event_time, row, raw, bytes)
                    SELECT $1, $2, * FROM (${sql}) AS u ON CONFLICT DO NOTHING RETURNING bytes)
       SELECT count(*) AS n, coalesce(sum(bytes), 0) AS bytes FROM ins`,
      [pv, batchId, ...params],
    );
    delta.rows += Number(res.rows[0]!.n);
    delta.bytes += Number(res.rows[0]!.bytes);
  }
  return delta;
}
