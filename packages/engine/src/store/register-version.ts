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
// Its sink tables are claimed for the pipeline in the same transaction (sink-claims.ts): a table
// another pipeline owns, or an existing table no pipeline owns, is refused. In the same transaction the
// version gets its physical tables (physical-sink-table.ts: inherited when it continues state in place,
// its own, created here, when it starts fresh) and, unless it is a candidate, serves: the serving
// views (serving-views.ts) select from its tables and pipelines.serving_version_id names it.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import {
  canonicalizeSpec,
  outputContinuations,
  specHash,
  stateCompatibility,
  type TPipelineSpec,
  type TStateFinding,
} from "@sluice/pipeline-spec";
import type { SqlClient } from "./sql-client";
import {
  continuationRefusal,
  freshStateRefusal,
  sharedTables,
  IncompatibleStateError,
  latestVersion,
} from "./version-compatibility";
import { claimSinkTables } from "./sink-claims";
import { handDedupKeysFromTable } from "./dedup-from-table";
import { checkDimensionPipeline } from "../join/dimension-pipeline";
import { outputViews } from "@sluice/pipeline-spec";
import { physicalSinkTable, servingName, type SinkTableMap } from "./physical-sink-table";
import { loadSinkTables, serveVersion } from "./serving-views";
import { createSinkTableIn, outputSinkTable } from "./sink-table";

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
  /**
   * A candidate (green, with fresh state): it gets its own tables but does not serve, and never fences
   * the serving version. Default false: the new version serves.
   */
  candidate?: boolean;
}

const newId = () => `c${Date.now().toString(36)}${randomBytes(8).toString("hex")}`;

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
  await claimSinkTables(client, spec, pipelineId);
  // A join on another pipeline's history: refused here unless that pipeline can be its dimension.
  const dimensionPipelineId = await checkDimensionPipeline(client, spec);
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
      ? freshStateRefusal(spec, compatibility)
      : compatibility.compatible
        ? undefined
        : continuationRefusal(previous, spec, compatibility);
    if (refusal) throw new IncompatibleStateError(refusal, compatibility);
  }
  const id = newId();
  const version = (previous?.version ?? 0) + 1;
  await client.query(
    `INSERT INTO pipeline_versions (id, pipeline_id, version, spec, spec_hash, registered_by, reason, dimension_pipeline_id)
     VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8)`,
    [
      id,
      pipelineId,
      version,
      JSON.stringify(canonicalizeSpec(spec)),
      hash,
      opts.registeredBy ?? null,
      opts.reason ?? "",
      dimensionPipelineId ?? null,
    ],
  );
  await client.query(`INSERT INTO checkpoints (pipeline_version_id) VALUES ($1)`, [id]);
  let continuedFrom: RegisteredVersion["continuedFrom"];
  let replaced: RegisteredVersion["replaced"];
  if (previous && !fresh && (await continueCheckpoint(client, previous.id, id, previous.spec, spec))) {
    continuedFrom = replaced = { pipelineVersionId: previous.id, version: previous.version };
    await client.query(`UPDATE pipeline_versions SET continued_from_id = $2 WHERE id = $1`, [
      id,
      previous.id,
    ]);
  } else if (previous && fresh && !opts.candidate && sharedTables(previous.spec, spec).length > 0) {
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
  const inherited = previous && !fresh ? await loadSinkTables(client, previous.id) : {};
  const tables = await createVersionTables(client, spec, version, inherited);
  await client.query(`UPDATE pipeline_versions SET sink_tables = $2::jsonb WHERE id = $1`, [
    id,
    JSON.stringify(tables),
  ]);
  if (!opts.candidate) await serveVersion(client, id);
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
 * The version's physical table for each of its postgres sinks: the predecessor's, when it continues
 * state in place and wrote the same table; otherwise a new one, created now with the output's columns.
 */
async function createVersionTables(
  client: SqlClient,
  spec: TPipelineSpec,
  version: number,
  inherited: SinkTableMap,
): Promise<SinkTableMap> {
  const tables: SinkTableMap = {};
  for (const view of outputViews(spec)) {
    const table = view.spec.sink.postgres?.table;
    if (!table) continue;
    const serving = servingName(table);
    const kept = inherited[serving];
    const physical = kept ?? physicalSinkTable(table, version);
    // An inherited table its predecessor never ran to create holds nothing: made with today's columns.
    await createSinkTableIn(client, outputSinkTable(view.spec, physical)!, { ifMissing: !!kept });
    tables[serving] = physical;
  }
  return tables;
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
    `UPDATE checkpoints SET lease_epoch = lease_epoch + 1, lease_owner = 'superseded' WHERE pipeline_version_id = $1 RETURNING 1`,
    [pipelineVersionId],
  );
  return res.rows.length === 1;
}

async function continueCheckpoint(
  client: SqlClient,
  from: string,
  to: string,
  previousSpec: TPipelineSpec,
  spec: TPipelineSpec,
): Promise<boolean> {
  // Fence the old version first.
  if (!(await fence(client, from, to))) return false;
  await client.query(
    `UPDATE checkpoints n SET last_batch_id = o.last_batch_id, end_offsets = o.end_offsets, event_time_max = o.event_time_max,
            watermark = o.watermark, state_rows = o.state_rows, state_bytes = o.state_bytes, dimension = o.dimension
       FROM checkpoints o WHERE o.pipeline_version_id = $1 AND n.pipeline_version_id = $2`,
    [from, to],
  );
  if (spec.dedupe) {
    await client.query(
      `INSERT INTO dedup_state (pipeline_version_id, key, event_time) SELECT $2, key, event_time FROM dedup_state WHERE pipeline_version_id = $1`,
      [from, to],
    );
    // A ledger whose table kept its keys hands them over from the table, when this version needs them.
    await handDedupKeysFromTable(client, from, to, previousSpec, spec);
  } else {
    // dedupe was removed: its keys stay behind, and out of the state size (bytes as commit-batch counts them).
    await client.query(
      `UPDATE checkpoints c SET state_rows = c.state_rows - d.n, state_bytes = c.state_bytes - d.bytes
         FROM (SELECT count(*) AS n, coalesce(sum(octet_length(key) + 8), 0) AS bytes FROM dedup_state WHERE pipeline_version_id = $1) d
        WHERE c.pipeline_version_id = $2`,
      [from, to],
    );
  }
  // Window and CDC state continue too, per output (state_rows above counts them); stateCompatibility
  // has checked that the new spec's windows, measures and CDC key and sequence mean what the stored
  // state means. An output continues the one of the same name (a one-sink pipeline's, "", the output
  // writing its table); a removed output's state stays behind, an added one starts empty.
  await continueOutputState(client, from, to, previousSpec, spec);
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

/** A one-sink pipeline keeps no per-output record: its output's is the checkpoint's watermark and its operator's state. */
const ONE_SINK_OUTPUT = `jsonb_build_object('watermark', o.watermark,
  'stateRows', (SELECT count(*) FROM window_state w WHERE w.pipeline_version_id = $1 AND w.output = '')
             + (SELECT count(*) FROM cdc_state c WHERE c.pipeline_version_id = $1 AND c.output = ''),
  'stateBytes', (SELECT coalesce(sum(bytes), 0) FROM window_state w WHERE w.pipeline_version_id = $1 AND w.output = '')
             + (SELECT coalesce(sum(octet_length(entity_key) + octet_length(sequence) + 1), 0) FROM cdc_state c WHERE c.pipeline_version_id = $1 AND c.output = ''))`;

/**
 * Copies each continuing output's window and CDC state (renamed when a one-sink pipeline became
 * outputs) and its part of checkpoints.outputs; a join's versions and waiting rows; and takes the
 * state of outputs that do not continue out of the checkpoint's state size.
 */
async function continueOutputState(
  client: SqlClient,
  from: string,
  to: string,
  before: TPipelineSpec,
  after: TPipelineSpec,
): Promise<void> {
  // As JSON: the console's Prisma transaction (prisma-sql-client.ts) passes no Postgres arrays.
  const pairs = JSON.stringify(outputContinuations(before, after).map((p) => ({ f: p.from, t: p.to })));
  const renamed = `(SELECT f, t FROM jsonb_to_recordset($3::jsonb) AS m(f text, t text))`;
  await client.query(
    `INSERT INTO window_state (pipeline_version_id, output, group_key, window_start, window_end, group_values, accumulators, bytes, updated_batch_id)
     SELECT $2, m.t, group_key, window_start, window_end, group_values, accumulators, bytes, updated_batch_id
       FROM window_state s JOIN ${renamed} m ON m.f = s.output WHERE s.pipeline_version_id = $1`,
    [from, to, pairs],
  );
  await client.query(
    `INSERT INTO cdc_state (pipeline_version_id, output, entity_key, sequence, deleted, event_time, evict_after)
     SELECT $2, m.t, entity_key, sequence, deleted, event_time, evict_after
       FROM cdc_state s JOIN ${renamed} m ON m.f = s.output WHERE s.pipeline_version_id = $1`,
    [from, to, pairs],
  );
  // Per output: its watermark and state size; an output that does not continue leaves the total.
  await client.query(
    `UPDATE checkpoints n SET
        outputs = coalesce((SELECT jsonb_object_agg(m.t, coalesce(o.outputs -> m.f, ${ONE_SINK_OUTPUT})) FROM ${renamed} m
                             WHERE o.outputs ? m.f OR m.f = ''), '{}'::jsonb),
        state_rows = n.state_rows - coalesce((SELECT sum((v ->> 'stateRows')::bigint) FROM jsonb_each(o.outputs) AS e(k, v) WHERE k NOT IN (SELECT f FROM ${renamed} m)), 0),
        state_bytes = n.state_bytes - coalesce((SELECT sum((v ->> 'stateBytes')::bigint) FROM jsonb_each(o.outputs) AS e(k, v) WHERE k NOT IN (SELECT f FROM ${renamed} m)), 0)
       FROM checkpoints o WHERE o.pipeline_version_id = $1 AND n.pipeline_version_id = $2`,
    [from, to, pairs],
  );
  if (before.join && after.join) {
    await client.query(
      `INSERT INTO join_versions (pipeline_version_id, entity_key, valid_from, sequence, deleted, "values", bytes)
       SELECT $2, entity_key, valid_from, sequence, deleted, "values", bytes FROM join_versions WHERE pipeline_version_id = $1`,
      [from, to],
    );
    await client.query(
      `INSERT INTO join_held (pipeline_version_id, partition, "offset", entity_key, event_time, row, raw, bytes, held_batch_id)
       SELECT $2, partition, "offset", entity_key, event_time, row, raw, bytes, held_batch_id FROM join_held WHERE pipeline_version_id = $1`,
      [from, to],
    );
  } else if (before.join) {
    // The join was removed: its state stays behind, and out of the state size.
    await client.query(
      `UPDATE checkpoints n SET dimension = '{}'::jsonb,
              state_rows = n.state_rows - coalesce((o.dimension #>> '{versions,rows}')::bigint, 0) - coalesce((o.dimension #>> '{held,rows}')::bigint, 0),
              state_bytes = n.state_bytes - coalesce((o.dimension #>> '{versions,bytes}')::bigint, 0) - coalesce((o.dimension #>> '{held,bytes}')::bigint, 0)
         FROM checkpoints o WHERE o.pipeline_version_id = $1 AND n.pipeline_version_id = $2`,
      [from, to],
    );
  }
}
