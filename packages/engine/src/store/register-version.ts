// Registering a pipeline version from a validated spec. The same spec (same canonical hash) maps to
// the same version; a changed spec becomes version N+1 and — like restarting a streaming query on
// its checkpoint — continues where version N stopped: its checkpoint, dedup state and any
// planned-but-uncommitted batch are carried over (so a batch stopped by a `fail` expectation re-runs
// over the same offsets after the fix), and version N is fenced so its runners cannot commit again.
// Blue/green rollouts, which need separate state, start a version from scratch instead.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { canonicalizeSpec, specHash, type TPipelineSpec } from "@sluice/spec";

export interface RegisteredVersion {
  pipelineId: string;
  pipelineVersionId: string;
  version: number;
  created: boolean;
  /** The version whose checkpoint this one continues from, when it was just created. */
  continuedFrom?: { pipelineVersionId: string; version: number };
}

const newId = () => `c${Date.now().toString(36)}${randomBytes(8).toString("hex")}`;

export async function registerPipelineVersion(pool: pg.Pool, spec: TPipelineSpec, opts: { continueFromPrevious?: boolean } = {}): Promise<RegisteredVersion> {
  const hash = specHash(spec);
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    // Serialize registrations of the same pipeline name.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('sluice.register.' || $1))`, [spec.name]);
    const team = await client.query<{ id: string }>(
      `INSERT INTO teams (id, slug, name) VALUES ($1, $2, $2) ON CONFLICT (slug) DO UPDATE SET slug = EXCLUDED.slug RETURNING id`,
      [newId(), spec.owner],
    );
    const pipeline = await client.query<{ id: string }>(
      `INSERT INTO pipelines (id, name, description, owner_team_id) VALUES ($1, $2, $3, $4)
       ON CONFLICT (name) DO UPDATE SET description = EXCLUDED.description, owner_team_id = EXCLUDED.owner_team_id RETURNING id`,
      [newId(), spec.name, spec.description ?? "", team.rows[0]!.id],
    );
    const pipelineId = pipeline.rows[0]!.id;
    const same = await client.query<{ id: string; version: number }>(`SELECT id, version FROM pipeline_versions WHERE pipeline_id = $1 AND spec_hash = $2`, [pipelineId, hash]);
    if (same.rows[0]) {
      await client.query("COMMIT");
      return { pipelineId, pipelineVersionId: same.rows[0].id, version: same.rows[0].version, created: false };
    }
    const latest = await client.query<{ id: string; version: number }>(`SELECT id, version FROM pipeline_versions WHERE pipeline_id = $1 ORDER BY version DESC LIMIT 1`, [pipelineId]);
    const previous = latest.rows[0];
    const id = newId();
    const version = (previous?.version ?? 0) + 1;
    await client.query(`INSERT INTO pipeline_versions (id, pipeline_id, version, spec, spec_hash) VALUES ($1, $2, $3, $4, $5)`, [id, pipelineId, version, canonicalizeSpec(spec), hash]);
    await client.query(`INSERT INTO checkpoints (pipeline_version_id) VALUES ($1)`, [id]);
    let continuedFrom: RegisteredVersion["continuedFrom"];
    if (previous && opts.continueFromPrevious !== false && (await continueCheckpoint(client, previous.id, id))) {
      continuedFrom = { pipelineVersionId: previous.id, version: previous.version };
    }
    await client.query("COMMIT");
    return { pipelineId, pipelineVersionId: id, version, created: true, ...(continuedFrom ? { continuedFrom } : {}) };
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

async function continueCheckpoint(client: pg.PoolClient, from: string, to: string): Promise<boolean> {
  // Fence the old version first: its runners' next plan or commit is rejected.
  const old = await client.query(`UPDATE checkpoints SET lease_epoch = lease_epoch + 1, lease_owner = 'superseded' WHERE pipeline_version_id = $1 RETURNING last_batch_id`, [from]);
  if (old.rowCount === 0) return false;
  await client.query(
    `UPDATE checkpoints n SET last_batch_id = o.last_batch_id, end_offsets = o.end_offsets, event_time_max = o.event_time_max,
            watermark = o.watermark, state_rows = o.state_rows, state_bytes = o.state_bytes
       FROM checkpoints o WHERE o.pipeline_version_id = $1 AND n.pipeline_version_id = $2`,
    [from, to],
  );
  await client.query(`INSERT INTO dedup_state (pipeline_version_id, key, event_time) SELECT $2, key, event_time FROM dedup_state WHERE pipeline_version_id = $1`, [from, to]);
  // Window and CDC state continue too (state_rows above counts them). A changed aggregate or cdc
  // section needs a version with fresh state instead (blue/green): accumulators are per measure.
  await client.query(
    `INSERT INTO window_state (pipeline_version_id, group_key, window_start, window_end, group_values, accumulators, bytes, updated_batch_id)
     SELECT $2, group_key, window_start, window_end, group_values, accumulators, bytes, updated_batch_id FROM window_state WHERE pipeline_version_id = $1`,
    [from, to],
  );
  await client.query(`INSERT INTO cdc_state (pipeline_version_id, entity_key, sequence, deleted) SELECT $2, entity_key, sequence, deleted FROM cdc_state WHERE pipeline_version_id = $1`, [from, to]);
  // A planned but uncommitted batch keeps its exact range in the new version.
  await client.query(
    `INSERT INTO offset_log (pipeline_version_id, batch_id, ranges)
     SELECT $2, l.batch_id, l.ranges FROM offset_log l JOIN checkpoints c ON c.pipeline_version_id = l.pipeline_version_id
      WHERE l.pipeline_version_id = $1 AND l.batch_id = c.last_batch_id + 1`,
    [from, to],
  );
  return true;
}
