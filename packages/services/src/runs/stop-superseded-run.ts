// A worker found that the version it was about to run has been superseded: a newer version of the
// pipeline continued from its checkpoint (and fenced it). Running it again would write the old spec's
// output from the old checkpoint, so the worker stops it and records why.
import type { PrismaClient } from "@sluice/db";
import type { TBatchTurnRef } from "./claim-batch-turn";
import { inTransaction, lockRun, recordTransition } from "./run-record";

export function stopSupersededRun(db: PrismaClient, turn: TBatchTurnRef, reason: string): Promise<boolean> {
  return inTransaction(db, async (tx) => {
    const run = await lockRun(tx, turn.pipelineVersionId);
    if (run.status !== "running") return false;
    await tx.pipelineRun.update({
      where: { pipelineVersionId: turn.pipelineVersionId },
      data: {
        status: "stopped",
        desiredState: "stopped",
        batchStartedAt: null,
        batchWorkerId: null,
        nextBatchAt: null,
        updatedAt: new Date(),
      },
    });
    await recordTransition(tx, turn.pipelineVersionId, {
      action: "superseded",
      from: run.status,
      to: "stopped",
      desired: "stopped",
      actor: `worker:${turn.workerId}`,
      reason,
    });
    return true;
  });
}
