// Registering a pipeline version from a validated spec. The same spec (same canonical hash) maps to
// the same version while that version is live; a changed spec becomes version N+1 and — like restarting a streaming query on
// its checkpoint — continues where version N stopped: its checkpoint, dedup, window and CDC state and
// any planned-but-uncommitted batch are carried over (so a batch stopped by a `fail` expectation
// re-runs over the same offsets after the fix), and version N is fenced so its runners cannot commit
// again. Only when the new spec would have built the same state (stateCompatibility): otherwise the
// registration is refused with the reasons, never continued wrongly and never silently restarted.
// A version with fresh state (blue/green, or a rebuild) is asked for explicitly and carries nothing over.
// A superseded version never runs again: registering its spec once more (a rollback) makes a new
// version that continues the latest state, instead of resuming the old version's stale checkpoint.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import {
  canonicalizeSpec,
  specHash,
  stateCompatibility,
  type TPipelineSpec,
  type TStateFinding,
} from "@sluice/pipeline-spec";
import {
  continuationRefusal,
  freshStateRefusal,
  IncompatibleStateError,
  latestVersion,
} from "./version-compatibility";

export interface RegisteredVersion {
  pipelineId: string;
  pipelineVersionId: string;
  version: number;
  created: boolean;
  /** The version whose checkpoint and state this one continues, when it was just created. */
  continuedFrom?: { pipelineVersionId: string; version: number };
  /** The previous version, fenced because this one took its place (it continued its state, or writes its table with fresh state). */
  replaced?: { pipelineVersionId: string; version: number };
  /** Compatible changes whose guarantee holds in full only after a while (e.g. a longer dedupe retention). */
  notes?: TStateFinding[];
}

export interface RegisterOptions {
  /**
   * true (default): continue the previous version's state; refused (IncompatibleStateError) when the
   * spec changed what that state means. false: fresh state, from source.kafka.startingOffsets.
   */
  continueFromPrevious?: boolean;
  /** Who registers it ("user:<email>", "cli:<email>"), kept with the version for its history. */
  registeredBy?: string;
  /** Why, in their words. */
  reason?: string;
}

const newId = () => `c${Date.now().toString(36)}${randomBytes(8).toString("hex")}`;

/**
 * The SQL a registration needs: a pg client, or an adapter over another driver's transaction (the
 * console applies an approved schema change inside its Prisma transaction, @sluice/services
 * change-requests/prisma-sql-client.ts), so that approving, registering and moving the runs commit
 * together or not at all.
 */
export interface SqlClient {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: R[]; rowCount: number | null }>;
}

export async function registerPipelineVersion(
  pool: pg.Pool,
  spec: TPipelineSpec,
  opts: RegisterOptions = {},
): Promise<RegisteredVersion> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const registered = await registerPipelineVersionIn(client, spec, opts);
    await client.query("COMMIT");
    return registered;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** The same registration inside a transaction the caller opened (and commits or rolls back). */
export async function registerPipelineVersionIn(
  client: SqlClient,
  spec: TPipelineSpec,
  opts: RegisterOptions = {},
): Promise<RegisteredVersion> {
  const hash = specHash(spec);
  // Serialize registrations of the same pipeline name (selected through a subquery: the lock
  // function returns void, which not every driver can read).
  await client.query(
    `SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(hashtext('sluice.register.' || $1))) l`,
    [spec.name],
  );
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
  const same = await client.query<{ id: string; version: number }>(
    `SELECT id, version FROM pipeline_versions WHERE pipeline_id = $1 AND spec_hash = $2 AND superseded_by_id IS NULL ORDER BY version DESC LIMIT 1`,
    [pipelineId, hash],
  );
  if (same.rows[0])
    return { pipelineId, pipelineVersionId: same.rows[0].id, version: same.rows[0].version, created: false };
  const previous = await latestVersion(client, spec.name);
  const compatibility = previous ? stateCompatibility(previous.spec, spec) : undefined;
  const fresh = opts.continueFromPrevious === false;
  if (previous && compatibility) {
    const refusal = fresh
      ? await freshStateRefusal(client, previous, spec, compatibility)
      : compatibility.compatible
        ? undefined
        : continuationRefusal(previous, spec, compatibility);
    if (refusal) throw new IncompatibleStateError(refusal, compatibility);
  }
  const id = newId();
  const version = (previous?.version ?? 0) + 1;
  await client.query(
    `INSERT INTO pipeline_versions (id, pipeline_id, version, spec, spec_hash, registered_by, reason) VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7)`,
    [
      id,
      pipelineId,
      version,
      JSON.stringify(canonicalizeSpec(spec)),
      hash,
      opts.registeredBy ?? null,
      opts.reason ?? "",
    ],
  );
  await client.query(`INSERT INTO checkpoints (pipeline_version_id) VALUES ($1)`, [id]);
  let continuedFrom: RegisteredVersion["continuedFrom"];
  let replaced: RegisteredVersion["replaced"];
  if (previous && !fresh && (await continueCheckpoint(client, previous.id, id, spec))) {
    continuedFrom = replaced = { pipelineVersionId: previous.id, version: previous.version };
    await client.query(`UPDATE pipeline_versions SET continued_from_id = $2 WHERE id = $1`, [
      id,
      previous.id,
    ]);
  } else if (
    previous &&
    fresh &&
    spec.sink.postgres &&
    spec.sink.postgres.table === previous.spec.sink.postgres?.table
  ) {
    // Two versions must not write one table: the new one, rebuilding it, takes the old one's place.
    if (await fence(client, previous.id, id))
      replaced = { pipelineVersionId: previous.id, version: previous.version };
    // Its pending dead-letter replays die with it: the new version re-reads the topic from its own
    // starting offsets, so replaying the old version's rows into it could apply them twice.
    await client.query(
      `UPDATE dead_letter_replay_items SET status = 'applied', outcome = 'refused', applied_at = now(),
              detail = 'not replayed: version ' || $2::text || ' was replaced by version ' || $3::text || ' with fresh state before the replay ran (the new version reads the topic on its own)'
        WHERE pipeline_version_id = $1 AND status = 'pending'`,
      [previous.id, previous.version, version],
    );
  }
  const notes = !fresh && compatibility && compatibility.notes.length > 0 ? compatibility.notes : undefined;
  return {
    pipelineId,
    pipelineVersionId: id,
    version,
    created: true,
    ...(continuedFrom ? { continuedFrom } : {}),
    ...(replaced ? { replaced } : {}),
    ...(notes ? { notes } : {}),
  };
}

/**
 * Supersedes a version: its runners' next plan or commit is rejected (fencing epoch), and it can never
 * take the lease again (acquireLease). False if it has no checkpoint.
 */
async function fence(client: SqlClient, pipelineVersionId: string, by: string): Promise<boolean> {
  await client.query(`UPDATE pipeline_versions SET superseded_by_id = $2 WHERE id = $1`, [
    pipelineVersionId,
    by,
  ]);
  const res = await client.query(
    `UPDATE checkpoints SET lease_epoch = lease_epoch + 1, lease_owner = 'superseded' WHERE pipeline_version_id = $1`,
    [pipelineVersionId],
  );
  return res.rowCount === 1;
}

async function continueCheckpoint(
  client: SqlClient,
  from: string,
  to: string,
  spec: TPipelineSpec,
): Promise<boolean> {
  // Fence the old version first.
  if (!(await fence(client, from, to))) return false;
  await client.query(
    `UPDATE checkpoints n SET last_batch_id = o.last_batch_id, end_offsets = o.end_offsets, event_time_max = o.event_time_max,
            watermark = o.watermark, state_rows = o.state_rows, state_bytes = o.state_bytes
       FROM checkpoints o WHERE o.pipeline_version_id = $1 AND n.pipeline_version_id = $2`,
    [from, to],
  );
  if (spec.dedupe) {
    await client.query(
      `INSERT INTO dedup_state (pipeline_version_id, key, event_time) SELECT $2, key, event_time FROM dedup_state WHERE pipeline_version_id = $1`,
      [from, to],
    );
  } else {
    // dedupe was removed: its keys stay behind, and out of the state size (bytes as commit-batch counts them).
    await client.query(
      `UPDATE checkpoints c SET state_rows = c.state_rows - d.n, state_bytes = c.state_bytes - d.bytes
         FROM (SELECT count(*) AS n, coalesce(sum(octet_length(key) + 8), 0) AS bytes FROM dedup_state WHERE pipeline_version_id = $1) d
        WHERE c.pipeline_version_id = $2`,
      [from, to],
    );
  }
  // Window and CDC state continue too (state_rows above counts them); stateCompatibility has checked
  // that the new spec's windows, measures and CDC key and sequence mean what the stored state means.
  await client.query(
    `INSERT INTO window_state (pipeline_version_id, group_key, window_start, window_end, group_values, accumulators, bytes, updated_batch_id)
     SELECT $2, group_key, window_start, window_end, group_values, accumulators, bytes, updated_batch_id FROM window_state WHERE pipeline_version_id = $1`,
    [from, to],
  );
  await client.query(
    `INSERT INTO cdc_state (pipeline_version_id, entity_key, sequence, deleted, event_time, evict_after)
     SELECT $2, entity_key, sequence, deleted, event_time, evict_after FROM cdc_state WHERE pipeline_version_id = $1`,
    [from, to],
  );
  // A planned but uncommitted batch keeps its exact range in the new version.
  await client.query(
    `INSERT INTO offset_log (pipeline_version_id, batch_id, ranges, replay)
     SELECT $2, l.batch_id, l.ranges, l.replay FROM offset_log l JOIN checkpoints c ON c.pipeline_version_id = l.pipeline_version_id
      WHERE l.pipeline_version_id = $1 AND l.batch_id = c.last_batch_id + 1`,
    [from, to],
  );
  // Dead letters waiting to be replayed go with it: the new version serves the pipeline now, and the
  // old one (fenced above) can never apply them.
  await client.query(
    `UPDATE dead_letter_replay_items SET pipeline_version_id = $2 WHERE pipeline_version_id = $1 AND status = 'pending'`,
    [from, to],
  );
  return true;
}
