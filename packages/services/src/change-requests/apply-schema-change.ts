// Applying an approved schema change, inside the approval's transaction — so a crash anywhere leaves
// the request pending with nothing changed, or everything below done (never two new versions, never
// a version without its run). A batch boundary by fencing, like a checkpoint reset:
//  1. the running version's checkpoint row is locked: a batch commit locks it too, so a batch in
//     flight either committed before (the new version continues after it) or, after this commits,
//     fails its fenced commit and is never applied (its recorded plan is carried over, so the new
//     version re-reads exactly that range);
//  2. the proposed spec is registered as the next version continuing that checkpoint
//     (registerPipelineVersionIn: same offsets, state, planned batch; the old version fenced — its
//     lease epoch bumped — and superseded); refused when it cannot continue the state;
//  3. the sink table gets the new version's columns (migrate-sink-table.ts: nullable additions,
//     safe widenings);
//  4. the old version's run is stopped (a new scheduling turn, so a job of the old turn does
//     nothing) and the new version's run takes its desired state: running → started, paused → paused.
// A request without a safe proposal (observe-schema-drift.ts `needsEdit`) is refused and stays
// pending. Errors that retrying cannot fix (the state cannot continue, the table cannot follow, the
// proposal equals the running spec, it no longer validates) are `ApplyRefusedError`: the caller rolls this
// work back to a savepoint and records the request as failed with the message.
import {
  ConfigurationError,
  IncompatibleStateError,
  lockCheckpoint,
  migrateSinkTable,
  registerPipelineVersionIn,
} from "@sluice/engine";
import { validateSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import type { Prisma } from "@sluice/db";
import { lockRun, recordTransition } from "../runs/run-record";
import { ChangeRequestError } from "./change-request-view";
import { prismaSqlClient } from "./prisma-sql-client";

type TTx = Prisma.TransactionClient;

export class ApplyRefusedError extends ChangeRequestError {
  constructor(message: string) {
    super(message, "conflict");
    this.name = "ApplyRefusedError";
  }
}

export interface TAppliedSchemaChange {
  version: number;
  pipelineVersionId: string;
  previousVersion: number;
  previousVersionId: string;
  /** The batch after which the new version continues, and the offsets it starts from. */
  afterBatchId: number;
  offsets: Record<string, number>;
  sinkChanges: string[];
  /** The run's desired state, carried over. */
  run: "running" | "paused" | "stopped";
}

export async function applySchemaChange(
  tx: TTx,
  cr: { id: bigint; pipelineVersionId: string; payload: unknown; requestedBy: string; reason: string },
  approvedBy: string,
): Promise<TAppliedSchemaChange> {
  const payload = (cr.payload ?? {}) as { proposed?: unknown; needsEdit?: string | null };
  // Not `failed`: the request stays pending (its observations keep updating) until someone rejects it
  // or asks again with an edited spec.
  if (payload.needsEdit)
    throw new ChangeRequestError(
      `change request #${cr.id} has no safe proposal to apply: ${payload.needsEdit} Reject it with a note, or ask again with an edited spec (the pipeline's New version → Request approval).`,
      "invalid",
    );
  const proposed = validateSpec(payload.proposed);
  if (!proposed.ok)
    throw new ApplyRefusedError(
      `the proposed spec no longer validates: ${proposed.errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`,
    );
  const old = await tx.pipelineVersion.findUniqueOrThrow({
    where: { id: cr.pipelineVersionId },
    select: { version: true, spec: true },
  });
  const current = validateSpec(old.spec);
  if (!current.ok)
    throw new ApplyRefusedError(
      `the running spec (v${old.version}) no longer validates: its state cannot be compared with the proposal's`,
    );

  const sql = prismaSqlClient(tx);
  const cp = await lockCheckpoint(sql, cr.pipelineVersionId);
  const registered = await registerPipelineVersionIn(sql, proposed.spec as TPipelineSpec, {
    registeredBy: `change-request:${cr.id}`,
    reason:
      `schema change request #${cr.id} (requested by ${cr.requestedBy}, approved by ${approvedBy}): ${cr.reason}`.slice(
        0,
        2000,
      ),
  }).catch((err: unknown) => {
    if (err instanceof IncompatibleStateError || err instanceof ConfigurationError)
      throw new ApplyRefusedError(err.message);
    throw err;
  });
  if (!registered.created)
    throw new ApplyRefusedError(
      `the proposal is exactly version ${registered.version}'s spec: there is nothing to apply`,
    );
  if (registered.continuedFrom?.pipelineVersionId !== cr.pipelineVersionId) {
    // The stale check before this makes it unreachable; refusing keeps "same offsets" a guarantee.
    throw new ChangeRequestError(
      `version ${registered.version} would not continue v${old.version}'s checkpoint: the request is stale`,
      "conflict",
    );
  }
  const sinkChanges = await migrateSinkTable(
    sql,
    current.spec,
    proposed.spec,
    registered.pipelineVersionId,
  ).catch((err: unknown) => {
    if (err instanceof ConfigurationError) throw new ApplyRefusedError(err.message);
    throw err;
  });

  const actor = `change-request:${cr.id}`;
  const why = `schema change request #${cr.id} applied: version ${registered.version} continues from here`;
  const before = await lockRun(tx, cr.pipelineVersionId);
  await tx.pipelineRun.update({
    where: { pipelineVersionId: cr.pipelineVersionId },
    data: {
      status: "stopped",
      desiredState: "stopped",
      scheduleSeq: before.seq + 1,
      batchStartedAt: null,
      batchWorkerId: null,
      nextBatchAt: null,
      updatedAt: new Date(),
    },
  });
  await recordTransition(tx, cr.pipelineVersionId, {
    action: "superseded",
    from: before.status,
    to: "stopped",
    desired: "stopped",
    actor,
    reason: why,
  });
  const run = before.desired;
  await lockRun(tx, registered.pipelineVersionId);
  if (run !== "stopped") {
    await tx.pipelineRun.update({
      where: { pipelineVersionId: registered.pipelineVersionId },
      data: {
        status: run,
        desiredState: run,
        scheduleSeq: 1,
        nextBatchAt: run === "running" ? new Date() : null,
        updatedAt: new Date(),
      },
    });
    await recordTransition(tx, registered.pipelineVersionId, {
      action: run === "running" ? "start" : "pause",
      from: "stopped",
      to: run,
      desired: run,
      actor,
      reason: `schema change request #${cr.id}: takes over from version ${old.version}`,
    });
  }
  return {
    version: registered.version,
    pipelineVersionId: registered.pipelineVersionId,
    previousVersion: old.version,
    previousVersionId: cr.pipelineVersionId,
    afterBatchId: cp.lastBatchId,
    offsets: cp.endOffsets,
    sinkChanges,
    run,
  };
}
