// Applying an approved checkpoint reset, inside the approval's transaction. It is a batch boundary by
// fencing rather than by waiting: the checkpoint row is locked (a batch commit locks it too, so the
// two are serialised), its lease epoch is bumped, and the offsets are rewritten. A batch that was in
// flight either committed before (the reset follows it) or now fails its fenced plan/commit and the
// worker re-runs the turn from the new checkpoint on a freshly leased runner; its planned-but-
// uncommitted range is dropped so nothing re-reads the old range. Chosen state (dedup, windows, CDC)
// is cleared in the same transaction, and a checkpoint_resets row marks the discontinuity.
import { countOf, tables, type Prisma } from "@sluice/db";
import { lockCheckpoint, resetCheckpoint } from "@sluice/engine";
import { ChangeRequestError } from "./change-request-view";
import { prismaSqlClient } from "./prisma-sql-client";
import { resetImpact, shapeOfSpec, type TResetImpact, type TResetState } from "./reset-impact";

type TTx = Prisma.TransactionClient;

export interface TAppliedReset {
  afterBatchId: number;
  offsetsBefore: Record<string, number>;
  offsetsAfter: Record<string, number>;
  stateCleared: boolean;
  stateRowsCleared: number;
}

export async function applyCheckpointReset(
  tx: TTx,
  cr: { id: bigint; pipelineVersionId: string; payload: unknown; impact: unknown; requestedBy: string },
  approvedBy: string,
): Promise<TAppliedReset> {
  const payload = cr.payload as { state: TResetState };
  const impact = cr.impact as TResetImpact;
  const sql = prismaSqlClient(tx);
  const cp = await lockCheckpoint(sql, cr.pipelineVersionId);
  const version = await tx.pipelineVersion.findUniqueOrThrow({
    where: { id: cr.pipelineVersionId },
    select: { spec: true },
  });
  const targets = Object.fromEntries(impact.partitions.map((p) => [String(p.partition), p.target]));
  // The checkpoint moved on since the request: judge the same targets from where it is now (a skip
  // ahead may have become a rewind, which can be wrong for a windowed aggregate).
  const now = resetImpact({
    shape: shapeOfSpec(version.spec),
    target: { kind: "offsets", offsets: targets },
    state: payload.state,
    checkpoint: cp.endOffsets,
    bounds: impact.partitions,
  });
  if (now.refusals.length > 0)
    throw new ChangeRequestError(
      `the checkpoint moved on since the request, and from where it is now: ${now.refusals.join("; ")}`,
      "conflict",
    );

  const clear = payload.state === "clear";
  const offsetsAfter = { ...cp.endOffsets, ...targets };
  let stateRowsCleared = 0;
  if (clear) {
    // A join's dimension versions and waiting rows (join_versions, join_held): a rebuild reads its
    // changelog from the start too.
    for (const table of ["dedup_state", "window_state", "cdc_state", "join_versions", "join_held"] as const)
      stateRowsCleared += await countOf(
        tx,
        tables.deleteFrom(table).where("pipeline_version_id", "=", cr.pipelineVersionId),
      );
  }
  await resetCheckpoint(sql, cr.pipelineVersionId, {
    afterBatchId: cp.lastBatchId,
    offsets: offsetsAfter,
    owner: `change-request:${cr.id}`,
    clearState: clear,
  });
  await tx.checkpointReset.create({
    data: {
      pipelineVersionId: cr.pipelineVersionId,
      changeRequestId: cr.id,
      afterBatchId: BigInt(cp.lastBatchId),
      offsetsBefore: cp.endOffsets,
      offsetsAfter,
      stateCleared: clear,
      requestedBy: cr.requestedBy,
      approvedBy,
    },
  });
  return {
    afterBatchId: cp.lastBatchId,
    offsetsBefore: cp.endOffsets,
    offsetsAfter,
    stateCleared: clear,
    stateRowsCleared,
  };
}
