// CDC apply-changes state in Postgres (cdc_state): the change points applied per entity key. Read
// before the commit, written inside the batch transaction together with the target table.
import type pg from "pg";
import { bulkSelect } from "../store/bulk";
import type { StateDelta } from "../operator/result-operator";
import type { Point } from "./change-points";

const pointBytes = (entityKey: string, p: Point) => Buffer.byteLength(entityKey) + Buffer.byteLength(p.sequence) + 1;

export async function loadPoints(db: pg.Pool, pv: string, keys: string[]): Promise<Map<string, Point[]>> {
  const out = new Map<string, Point[]>();
  if (keys.length === 0) return out;
  const res = await db.query<{ entity_key: string; sequence: string; deleted: boolean }>(
    `SELECT entity_key, sequence, deleted FROM cdc_state WHERE pipeline_version_id = $1 AND entity_key = ANY($2::text[])`,
    [pv, keys],
  );
  for (const r of res.rows) {
    let points = out.get(r.entity_key);
    if (!points) out.set(r.entity_key, (points = []));
    points.push({ sequence: r.sequence, deleted: r.deleted });
  }
  return out;
}

/** Adds points; with `replaceKeys`, the keys' previous points are removed first (SCD1 keeps only the newest). */
export async function writePoints(client: pg.PoolClient, pv: string, points: { entityKey: string; point: Point }[], replaced: { entityKey: string; point: Point }[]): Promise<StateDelta> {
  const delta: StateDelta = { rows: points.length - replaced.length, bytes: 0 };
  for (const p of points) delta.bytes += pointBytes(p.entityKey, p.point);
  for (const p of replaced) delta.bytes -= pointBytes(p.entityKey, p.point);
  if (replaced.length > 0) {
    const { sql, params } = bulkSelect(
      [
        { name: "entity_key", sqlType: "text", values: replaced.map((p) => p.entityKey) },
        { name: "sequence", sqlType: "text", values: replaced.map((p) => p.point.sequence) },
      ],
      2,
    );
    await client.query(`DELETE FROM cdc_state s USING (${sql}) AS d (entity_key, sequence) WHERE s.pipeline_version_id = $1 AND s.entity_key = d.entity_key AND s.sequence = d.sequence`, [pv, ...params]);
  }
  if (points.length > 0) {
    const { sql, params } = bulkSelect(
      [
        { name: "entity_key", sqlType: "text", values: points.map((p) => p.entityKey) },
        { name: "sequence", sqlType: "text", values: points.map((p) => p.point.sequence) },
        { name: "deleted", sqlType: "boolean", values: points.map((p) => p.point.deleted) },
      ],
      2,
    );
    await client.query(`INSERT INTO cdc_state (pipeline_version_id, entity_key, sequence, deleted) SELECT $1, * FROM (${sql}) AS u`, [pv, ...params]);
  }
  return delta;
}
