// CDC apply-changes state in Postgres (cdc_state): the change points applied per entity key, with
// their event times and when each may leave the state (cdc.stateEviction). Read before the commit,
// written and evicted inside the batch transaction together with the target table.
import type pg from "pg";
import { bulkSelect } from "../store/bulk";
import type { StateDelta } from "../operator/result-operator";
import type { Point, StoredPoint } from "./change-points";

// State size counts the key, the sequence and the delete flag (what the point says, not its times).
const pointBytes = (entityKey: string, p: Point) =>
  Buffer.byteLength(entityKey) + Buffer.byteLength(p.sequence) + 1;
const POINT_BYTES_SQL = "octet_length(entity_key) + octet_length(sequence) + 1";

const toDate = (ms: number | null) => (ms === null ? null : new Date(ms));

export async function loadPoints(
  db: pg.Pool | pg.PoolClient,
  pv: string,
  output: string,
  keys: string[],
): Promise<Map<string, StoredPoint[]>> {
  const out = new Map<string, StoredPoint[]>();
  if (keys.length === 0) return out;
  const res = await db.query<{
    entity_key: string;
    sequence: string;
    deleted: boolean;
    event_time: Date | null;
    evict_after: Date | null;
  }>(
    `SELECT entity_key, sequence, deleted, event_time, evict_after FROM cdc_state WHERE pipeline_version_id = $1 AND output = $2 AND entity_key = ANY($3::text[])`,
    [pv, output, keys],
  );
  for (const r of res.rows) {
    let points = out.get(r.entity_key);
    if (!points) out.set(r.entity_key, (points = []));
    points.push({
      sequence: r.sequence,
      deleted: r.deleted,
      eventTime: r.event_time?.getTime() ?? null,
      evictAfter: r.evict_after?.getTime() ?? null,
    });
  }
  return out;
}

/** Adds points after removing `replaced` (SCD1 keeps only the newest; a point whose eviction time changed is re-added). */
export async function writePoints(
  client: pg.PoolClient,
  pv: string,
  output: string,
  points: { entityKey: string; point: StoredPoint }[],
  replaced: { entityKey: string; point: Point }[],
): Promise<StateDelta> {
  const delta: StateDelta = { rows: points.length - replaced.length, bytes: 0 };
  for (const p of points) delta.bytes += pointBytes(p.entityKey, p.point);
  for (const p of replaced) delta.bytes -= pointBytes(p.entityKey, p.point);
  if (replaced.length > 0) {
    const { sql, params } = bulkSelect(
      [
        { name: "entity_key", sqlType: "text", values: replaced.map((p) => p.entityKey) },
        { name: "sequence", sqlType: "text", values: replaced.map((p) => p.point.sequence) },
      ],
      3,
    );
    await client.query(
      `DELETE FROM cdc_state s USING (${sql}) AS d (entity_key, sequence) WHERE s.pipeline_version_id = $1 AND s.output = $2 AND s.entity_key = d.entity_key AND s.sequence = d.sequence`,
      [pv, output, ...params],
    );
  }
  if (points.length > 0) {
    const { sql, params } = bulkSelect(
      [
        { name: "entity_key", sqlType: "text", values: points.map((p) => p.entityKey) },
        { name: "sequence", sqlType: "text", values: points.map((p) => p.point.sequence) },
        { name: "deleted", sqlType: "boolean", values: points.map((p) => p.point.deleted) },
        { name: "event_time", sqlType: "timestamptz", values: points.map((p) => toDate(p.point.eventTime)) },
        {
          name: "evict_after",
          sqlType: "timestamptz",
          values: points.map((p) => toDate(p.point.evictAfter)),
        },
      ],
      3,
    );
    await client.query(
      `INSERT INTO cdc_state (pipeline_version_id, output, entity_key, sequence, deleted, event_time, evict_after) SELECT $1, $2, * FROM (${sql}) AS u`,
      [pv, output, ...params],
    );
  }
  return delta;
}

/** Removes the points whose eviction time the horizon has passed; returns what left the state. */
export async function evictPoints(
  client: pg.PoolClient,
  pv: string,
  output: string,
  horizon: Date,
): Promise<StateDelta> {
  const res = await client.query<{ n: string; bytes: string }>(
    `WITH del AS (DELETE FROM cdc_state WHERE pipeline_version_id = $1 AND output = $2 AND evict_after < $3 RETURNING entity_key, sequence)
     SELECT count(*) AS n, coalesce(sum(${POINT_BYTES_SQL}), 0) AS bytes FROM del`,
    [pv, output, horizon],
  );
  return { rows: Number(res.rows[0]!.n), bytes: Number(res.rows[0]!.bytes) };
}
