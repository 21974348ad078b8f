// Asking for dead letters (and quarantined or late rows) to be replayed through the pipeline's serving
// version — its contract, expectations and sink — selected by id, "all with this reason" (a reason
// group as the dead letters panel shows it) or any filter the panel browses with (dead-letter-filter.ts,
// so "replay all matching" takes exactly the rows listed), from any version of the pipeline: after a schema change
// the rows quarantined by the previous version replay into the new one. This only records the request
// (dead_letter_replays) and one pending item per accepted row; the version's runner applies them in
// its own fenced batch (@sluice/engine, docs/engine.md "Replaying dead letters"), which marks each
// item applied in that batch's transaction.
//
// It refuses, per row and naming why, what a replay could make wrong: a row already replayed (or
// waiting to be), one whose source record was replayed from another dead letter, a discarded one, one
// whose raw value was truncated (only its first 64 KiB were kept), one from another topic, one a
// checkpoint reset rewound over after it was dead-lettered (it was read again), one of a version the
// serving one does not continue (fresh state: it reads the topic on its own), and one
// behind the serving version's late horizon (watermark − allowedLateness): in a windowed pipeline its
// window is final and evicted, so the row would be dropped as late again — or, were it applied, count
// in a window already emitted. The engine re-checks the last at apply time (the watermark may move
// meanwhile: such a row is late again, never applied to a final window).
//
// Requests of one pipeline are serialized (a transaction-scoped advisory lock), and a partial unique
// index allows one pending item per dead letter, so two people replaying the same rows at once queue
// each row once.
import { z } from "zod";
import { countOf, rowsOf, sql, tables, type PrismaClient, type TRowOf } from "@sluice/db";
import { findCheckpoint, type Checkpoint } from "@sluice/engine";
import { parseDuration } from "@sluice/pipeline-spec";
import { recordAuditEvent, type TAuditWho } from "../audit/record-audit-event";
import { prismaSqlClient } from "../change-requests/prisma-sql-client";
import { deadLettersWithVersion, withFate } from "./dead-letter-fate";
import {
  deadLetterCondition,
  narrowsSomething,
  ZDeadLetterFilter,
  type TDeadLetterFilter,
} from "./dead-letter-filter";

/** At most this many rows per request (a second request takes the rest). */
export const MAX_REPLAY = 10_000;

export const ZRequestDeadLetterReplayInput = ZDeadLetterFilter.extend({
  note: z.string().trim().min(1, "Give a reason: why these rows should be replayed now").max(2000),
}).refine(narrowsSomething, {
  message:
    "choose which rows: by id, all with a reason, or a filter (replaying everything needs at least the outcome)",
  path: ["ids"],
});
export type TRequestDeadLetterReplayInput = z.input<typeof ZRequestDeadLetterReplayInput>;

export interface TDeadLetterReplayRefusal {
  id: number;
  why: string;
}

export interface TRequestDeadLetterReplayResult {
  /** null when every row was refused (nothing was queued). */
  replayId: number | null;
  /** The version the rows replay into. */
  version: number;
  accepted: number;
  refused: TDeadLetterReplayRefusal[];
  /** True when more rows match than one request takes. */
  more: boolean;
}

/** Outcomes after which the row is no longer a dead letter (replaying it again would apply it twice). */
export const SETTLED_REPLAY_OUTCOMES = ["sink", "duplicate", "filtered", "dropped", "stale"];

/** null when there is no pipeline of that name, or it has no version yet. */
export async function requestDeadLetterReplay(
  db: PrismaClient,
  who: TAuditWho,
  input: TRequestDeadLetterReplayInput,
): Promise<TRequestDeadLetterReplayResult | null> {
  const f = ZRequestDeadLetterReplayInput.parse(input);
  const pipeline = await db.pipeline.findUnique({
    where: { name: f.pipeline },
    select: {
      id: true,
      name: true,
      servingVersion: { select: { id: true, version: true, spec: true } },
    },
  });
  const serving = pipeline?.servingVersion;
  if (!pipeline || !serving) return null;
  const spec = serving.spec as TReplaySpec;
  const { pipeline: _name, note: _note, ...filter } = f;

  return db.$transaction(async (tx) => {
    // Wrapped in a sub-select: the lock function returns void, which is not a column Prisma can read.
    await rowsOf(
      tx,
      tables
        .selectFrom(
          tables
            .selectNoFrom(
              sql`pg_advisory_xact_lock(hashtext('deadletter.replay'), hashtext(${pipeline.id}))`.as(
                "locked",
              ),
            )
            .as("l"),
        )
        .select(sql<number>`1`.as("one")),
    );
    const cp = await findCheckpoint(prismaSqlClient(tx), serving.id);
    // The versions whose checkpoint the serving one continues (itself included): their dead letters
    // are rows it skipped. Another version's (fresh state: blue/green, a rebuild) it reads on its own.
    const lineage = await rowsOf(
      tx,
      tables
        .withRecursive("chain(id, continued_from_id)", (db) =>
          db
            .selectFrom("pipeline_versions")
            .select(["id", "continued_from_id"])
            .where("id", "=", serving.id)
            .union(
              db
                .selectFrom("pipeline_versions as v")
                .innerJoin("chain as c", "v.id", "c.continued_from_id")
                .select(["v.id", "v.continued_from_id"]),
            ),
        )
        .selectFrom("chain")
        .select("id"),
    );
    const continued = new Set(lineage.map((l) => l.id));
    const rows = await rowsOf(tx, candidates(pipeline.id, continued, filter));
    const taken = rows.slice(0, MAX_REPLAY);
    const refusal = refusalFor(spec, serving.version, cp ?? { watermark: null, outputs: {} }, continued);
    const refused: TDeadLetterReplayRefusal[] = [];
    const accepted: bigint[] = [];
    const records = new Map<string, bigint>();
    for (const row of taken) {
      const record = `${row.topic}:${row.partition}:${row.offset}`;
      const sameRecord = records.get(record);
      const why =
        sameRecord !== undefined
          ? `its source record (partition ${row.partition}, offset ${row.offset}) is replayed from dead letter #${sameRecord} in this request`
          : refusal(row);
      if (!why) records.set(record, row.id);
      if (why) refused.push({ id: Number(row.id), why });
      else accepted.push(row.id);
    }
    // Asked by id but not a dead letter of this pipeline: say so rather than ignore it.
    if (f.ids) {
      const found = new Set(taken.map((r) => Number(r.id)));
      for (const id of f.ids)
        if (!found.has(id))
          refused.push({
            id,
            why: `no dead letter #${id} of pipeline "${pipeline.name}"${f.outcome ? ` with outcome ${f.outcome}` : ""}${f.reasonGroup || f.reasonContains ? " with that reason" : ""}`,
          });
    }
    const selection = JSON.parse(JSON.stringify(filter)) as Record<string, string | number | number[]>;
    let replayId: number | null = null;
    if (accepted.length > 0) {
      const replay = await tx.deadLetterReplay.create({
        data: {
          pipelineId: pipeline.id,
          pipelineVersionId: serving.id,
          actorUserId: who.actorUserId,
          actor: who.actor,
          note: f.note,
          selection,
          accepted: accepted.length,
          refused: refused as object[],
        },
        select: { id: true },
      });
      replayId = Number(replay.id);
      const queued = await countOf(
        tx,
        tables
          .insertInto("dead_letter_replay_items")
          .columns(["replay_id", "dead_letter_id", "pipeline_version_id"])
          .expression(
            tables
              .selectFrom(
                sql<{
                  x: string;
                }>`jsonb_array_elements_text(${JSON.stringify(accepted.map(String))}::jsonb)`.as("x"),
              )
              .select((eb) => [
                eb.val(replay.id).as("replay_id"),
                sql<bigint>`x::bigint`.as("dead_letter_id"),
                eb.val(serving.id).as("pipeline_version_id"),
              ]),
          )
          .onConflict((oc) =>
            oc.column("dead_letter_id").where("status", "=", sql.lit("pending")).doNothing(),
          ),
      );
      // The lock serializes requests and every pending row was refused above, so none can conflict.
      if (queued !== accepted.length)
        throw new Error(
          `replay of ${accepted.length} dead letter(s): only ${queued} could be queued; nothing was queued, try again`,
        );
    }
    const result: TRequestDeadLetterReplayResult = {
      replayId,
      version: serving.version,
      accepted: accepted.length,
      refused,
      more: rows.length > MAX_REPLAY,
    };
    await recordAuditEvent(tx, {
      ...who,
      action: "deadletter.replay",
      outcome: accepted.length > 0 ? "succeeded" : "refused",
      target: { type: "pipeline", id: pipeline.id, label: pipeline.name },
      reason: f.note,
      after: {
        replayId,
        version: serving.version,
        accepted: accepted.length,
        refused: refused.slice(0, 100),
        refusedCount: refused.length,
        selection,
      },
    });
    return result;
  });
}

/** The parts of a stored spec the refusals read (the stored spec was validated at registration). */
interface TReplaySpec {
  source?: { kafka?: { topic?: string } };
  eventTime?: { column?: string };
  aggregate?: TReplayAggregate;
  outputs?: Record<string, { aggregate?: TReplayAggregate }>;
}
type TReplayAggregate = { window?: unknown; allowedLateness?: string | number };
type TReplayCheckpoint = Pick<Checkpoint, "watermark" | "outputs">;

const latenessOf = (a: TReplayAggregate | undefined) =>
  a?.allowedLateness === undefined ? 0 : parseDuration(a.allowedLateness);

/**
 * The late horizon of the serving version: its watermark minus allowedLateness, or with several
 * outputs the earliest of the outputs' (a row counts wherever it is still on time).
 */
function lateHorizonOf(
  spec: TReplaySpec,
  cp: TReplayCheckpoint,
): { horizon: Date | null; latenessMs: number; windowed: boolean } {
  if (!spec.outputs) {
    const latenessMs = latenessOf(spec.aggregate);
    const horizon = cp.watermark ? new Date(cp.watermark.getTime() - latenessMs) : null;
    return { horizon, latenessMs, windowed: spec.aggregate?.window !== undefined };
  }
  let min: number | null = null;
  for (const [name, o] of Object.entries(spec.outputs)) {
    const w = cp.outputs[name]?.watermark;
    if (!w) return { horizon: null, latenessMs: 0, windowed: false };
    const h = Date.parse(w) - latenessOf(o.aggregate);
    if (min === null || h < min) min = h;
  }
  const windowed = Object.values(spec.outputs).some((o) => o.aggregate?.window !== undefined);
  return { horizon: min === null ? null : new Date(min), latenessMs: 1, windowed };
}

/** The rows the filter takes, each with what became of it and of its source record so far. */
function candidates(pipelineId: string, continued: Set<string>, filter: Omit<TDeadLetterFilter, "pipeline">) {
  return withFate(deadLettersWithVersion())
    .select((eb) => [
      "d.id",
      "d.pipeline_version_id",
      "v.version",
      "d.topic",
      "d.partition",
      "d.offset",
      "d.truncated",
      "d.payload",
      "d.reason",
      "r.actor as discarded_by",
      "r.created_at as discarded_at",
      "r.reason as discard_reason",
      // The newest replay item of this dead letter.
      "i.status as item_status",
      "i.outcome as item_outcome",
      "i.detail as item_detail",
      "i.batch_id as item_batch",
      "i.again_dead_letter_id as item_again",
      eb.fn.coalesce("i.applied_at", "i.created_at").as("item_at"),
      "i.replay_id as item_replay",
      "rq.actor as item_by",
      "iv.version as item_into",
      // Another dead letter of the same source record, replayed (or pending) so that it reached the result.
      eb
        .selectFrom("dead_letters as o")
        .innerJoin("pipeline_versions as ov", "ov.id", "o.pipeline_version_id")
        .innerJoin("dead_letter_replay_items as oi", "oi.dead_letter_id", "o.id")
        .select("o.id")
        .where("ov.pipeline_id", "=", pipelineId)
        .whereRef("o.id", "<>", "d.id")
        .whereRef("o.topic", "=", "d.topic")
        .whereRef("o.partition", "=", "d.partition")
        .whereRef("o.offset", "=", "d.offset")
        .where((eb) =>
          eb.or([
            eb("oi.status", "=", sql.lit("pending")),
            eb("oi.outcome", "=", sql<string>`ANY(${SETTLED_REPLAY_OUTCOMES}::text[])`),
          ]),
        )
        .limit(1)
        .as("twin_id"),
      // A checkpoint reset (of a version the serving one continues) after the row, rewinding to or
      // before its offset: the row was read again.
      eb
        .selectFrom("checkpoint_resets as cr")
        .select((eb) => eb.fn.max("cr.created_at").as("at"))
        .where(
          "cr.pipeline_version_id",
          "in",
          sql<string>`(SELECT jsonb_array_elements_text(${JSON.stringify([...continued])}::jsonb))`,
        )
        .whereRef("cr.created_at", ">", "d.created_at")
        .where((eb) =>
          eb(
            sql<bigint>`(${eb.ref("cr.offsets_after")} ->> ${eb.ref("d.partition")}::text)::bigint`,
            "<=",
            eb.ref("d.offset"),
          ),
        )
        .as("rewound_at"),
    ])
    .where("v.pipeline_id", "=", pipelineId)
    .where(deadLetterCondition(filter))
    .orderBy("d.id")
    .limit(MAX_REPLAY + 1);
}
type TCandidate = TRowOf<ReturnType<typeof candidates>>;

function refusalFor(
  spec: TReplaySpec,
  version: number,
  cp: TReplayCheckpoint,
  continued: ReadonlySet<string>,
) {
  const topic = spec.source?.kafka?.topic;
  const column = spec.eventTime?.column;
  const { horizon: late, latenessMs, windowed } = lateHorizonOf(spec, cp);
  const watermark = cp.watermark;
  const horizon = column ? late : null;
  return (row: TCandidate): string | null => {
    if (row.discarded_by)
      return `discarded by ${row.discarded_by} at ${row.discarded_at!.toISOString()}: ${row.discard_reason}`;
    if (row.item_status === "pending")
      return `a replay is already pending (request #${row.item_replay} by ${row.item_by} at ${row.item_at!.toISOString()}, into version ${row.item_into})`;
    if (row.item_status === "applied") {
      const into = `replayed into batch ${row.item_batch} of version ${row.item_into} by ${row.item_by} at ${row.item_at!.toISOString()}`;
      if (SETTLED_REPLAY_OUTCOMES.includes(row.item_outcome ?? ""))
        return `already ${into} (${row.item_outcome}${row.item_detail ? `: ${row.item_detail}` : ""})`;
      if (row.item_again !== null && row.item_again !== row.id)
        return `already ${into} and failed again (${row.item_detail}); replay its new dead letter #${row.item_again} instead`;
      // Failed again (or was left out) and is still this dead letter: it may be replayed again.
    }
    if (!continued.has(row.pipeline_version_id))
      return `it is a row of version ${row.version}, whose checkpoint version ${version} does not continue (registered with fresh state, it reads the topic on its own): replayed, it could be applied twice`;
    if (row.rewound_at !== null)
      return `a checkpoint reset at ${row.rewound_at.toISOString()} rewound partition ${row.partition} to or before offset ${row.offset}: the row was read again after it was dead-lettered, so replaying it could apply it twice`;
    if (row.twin_id !== null)
      return `its source record (partition ${row.partition}, offset ${row.offset}) was already replayed from dead letter #${row.twin_id}`;
    if (row.truncated)
      return "only the first 64 KiB of its raw value were kept: replaying it would apply a different row";
    if (topic && row.topic !== topic)
      return `it was read from topic "${row.topic}", and version ${version} reads "${topic}"`;
    // A join's dimension_missing row passed the late check when it was read: a replay joins it again.
    if (horizon && column && !row.reason.startsWith("dimension_missing:")) {
      const t = eventTimeOf(row.payload, column);
      if (t !== null && t < horizon.getTime()) {
        const at = spec.outputs
          ? `event time ${new Date(t).toISOString()} is behind every output's late horizon (${horizon.toISOString()}) of version ${version}`
          : `event time ${new Date(t).toISOString()} is behind the watermark ${watermark!.toISOString()}${latenessMs > 0 ? ` minus allowedLateness` : ""} of version ${version}`;
        return windowed
          ? `its window is already final and evicted (${at}): replayed, it would be dropped as late, or count in a window already emitted`
          : `${at}: replayed, it would be late again`;
      }
    }
    return null;
  };
}

/** The row's event time as the contract reads a timestamp (an ISO string or epoch ms); null when it cannot tell (the engine then decides). */
function eventTimeOf(payload: unknown, column: string): number | null {
  if (!payload || typeof payload !== "object") return null;
  const v = (payload as Record<string, unknown>)[column];
  if (typeof v !== "string" && typeof v !== "number") return null;
  const ms = new Date(v).getTime();
  return Number.isNaN(ms) ? null : ms;
}
