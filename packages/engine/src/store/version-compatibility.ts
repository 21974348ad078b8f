// Whether a new version of a pipeline may continue its previous version's state, and what to tell the
// person registering it when not. The decision is @sluice/pipeline-spec's stateCompatibility; this module
// finds the previous version, and words the refusal so that it says what to do (docs/engine.md, "A new
// version"). A version with fresh state writes physical tables of its own (physical-sink-table.ts), so
// it never overwrites the previous version's results.
import type pg from "pg";
import {
  sinkTables,
  specHash,
  stateCompatibility,
  validateSpec,
  type TPipelineSpec,
  type TStateCompatibility,
  type TStateFinding,
  type TStateKind,
} from "@sluice/pipeline-spec";
import { ConfigurationError } from "../errors";
import type { SqlClient } from "./sql-client";

type Db = SqlClient;

export interface RegisteredSpec {
  id: string;
  version: number;
  spec: TPipelineSpec;
}

/** The newest registered version of a pipeline, with its spec. */
export async function latestVersion(db: Db, pipelineName: string): Promise<RegisteredSpec | undefined> {
  const res = await db.query<{ id: string; version: number; spec: unknown }>(
    `SELECT v.id, v.version, v.spec FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1 ORDER BY v.version DESC LIMIT 1`,
    [pipelineName],
  );
  const row = res.rows[0];
  if (!row) return undefined;
  const checked = validateSpec(row.spec);
  if (!checked.ok)
    throw new ConfigurationError(
      `the stored spec of ${pipelineName} version ${row.version} no longer validates (${checked.errors.map((e) => `${e.path}: ${e.message}`).join("; ")}): its state cannot be compared with a new version's`,
    );
  return { id: row.id, version: row.version, spec: checked.spec };
}

export type RegistrationPreview =
  | { kind: "new-pipeline" }
  | { kind: "registered"; version: number }
  | { kind: "new-version"; previous: number; compatibility: TStateCompatibility };

/** What registering this spec would do, without registering it (`sluice validate --against-registered`). */
export async function previewRegistration(pool: pg.Pool, spec: TPipelineSpec): Promise<RegistrationPreview> {
  const same = await pool.query<{ version: number }>(
    `SELECT v.version FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id
      WHERE p.name = $1 AND v.spec_hash = $2 AND v.superseded_by_id IS NULL ORDER BY v.version DESC LIMIT 1`,
    [spec.name, specHash(spec)],
  );
  if (same.rows[0]) return { kind: "registered", version: same.rows[0].version };
  const previous = await latestVersion(pool, spec.name);
  if (!previous) return { kind: "new-pipeline" };
  return {
    kind: "new-version",
    previous: previous.version,
    compatibility: stateCompatibility(previous.spec, spec),
  };
}

/** Registration refused: continuing would be wrong, and fresh state was not asked for (or cannot help). */
export class IncompatibleStateError extends ConfigurationError {
  constructor(
    message: string,
    readonly compatibility: TStateCompatibility,
  ) {
    super(message);
  }
}

const STATE_NAMES: Record<TStateKind, string> = {
  checkpoint: "checkpoint",
  sink: "sink",
  dedup: "dedup state",
  window: "window state",
  cdc: "CDC state",
  join: "join state (the dimension's versions, changelog offsets and waiting rows)",
  webhookLedger: "webhook delivery ledger",
};

/** One line per finding: "  - window state: aggregate.window.tumbling changed from 5m to 10m: …". */
export function formatStateFindings(findings: TStateFinding[]): string {
  return findings.map((f) => `  - ${STATE_NAMES[f.state]}: ${f.reason}`).join("\n");
}

const LEDGER_ADVICE =
  "The webhook delivery ledger is kept per pipeline, so fresh state does not make a new idempotency key safe: keep sink.webhook.idempotencyKey, or deploy the change as a new pipeline (another name).";

/** Why version `next` may not continue `previous`, and the ways forward. */
export function continuationRefusal(
  previous: RegisteredSpec,
  next: TPipelineSpec,
  compatibility: TStateCompatibility,
): string {
  const onlyLedger = compatibility.problems.every((p) => p.state === "webhookLedger");
  const table = sinkTables(next)
    .map((t) => t.table)
    .join(", ");
  const fresh =
    `or register the spec with fresh state (sluice run|start <spec> --fresh-state): the new version starts from source.kafka.startingOffsets (${next.source.kafka.startingOffsets}) with empty state` +
    (table
      ? `, beside version ${previous.version} as a candidate (sluice rollout start), or replacing it: readers of ${table} then see the new version's results, which start empty (version ${previous.version}'s stay in its own table).`
      : ".");
  return [
    `${next.name}: the new version cannot continue version ${previous.version}'s state, so nothing was registered:`,
    formatStateFindings(compatibility.problems),
    onlyLedger
      ? LEDGER_ADVICE
      : `To go ahead: revert ${compatibility.problems.length > 1 ? "those changes" : "that change"} to continue version ${previous.version}'s state, ${fresh}`,
    ...(compatibility.problems.some((p) => p.state === "webhookLedger") && !onlyLedger
      ? [LEDGER_ADVICE]
      : []),
  ].join("\n");
}

/** The postgres tables both specs write (any output of each). */
export function sharedTables(a: TPipelineSpec, b: TPipelineSpec): string[] {
  const tables = new Set(sinkTables(a).map((t) => t.table));
  return sinkTables(b).flatMap((t) => (tables.has(t.table) ? [t.table] : []));
}

/**
 * Why a version with fresh state may not be registered, if it may not: a changed idempotency key
 * (fresh state does not reset the per-pipeline ledger). Results of another shape are no reason: the
 * new version writes its own physical tables.
 */
export function freshStateRefusal(
  next: TPipelineSpec,
  compatibility: TStateCompatibility,
): string | undefined {
  const ledger = compatibility.problems.filter((p) => p.state === "webhookLedger");
  if (ledger.length > 0)
    return `${next.name}: not registered, even with fresh state:\n${formatStateFindings(ledger)}\n${LEDGER_ADVICE}`;
  return undefined;
}
