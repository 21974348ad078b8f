// A rollout moves runs in the transaction that switches serving: the version that stops serving is
// stopped, the one that serves again (a rollback) runs. Written as every run change is (run-record.ts):
// row locked, changed, a transition with who and why.
import { lockRun, recordTransition, type TTx } from "../runs/run-record";

export async function setRun(
  tx: TTx,
  pipelineVersionId: string,
  to: "running" | "stopped",
  action: string,
  actor: string,
  reason: string,
): Promise<void> {
  const before = await lockRun(tx, pipelineVersionId);
  if (before.status === to && before.desired === to) return;
  await tx.pipelineRun.update({
    where: { pipelineVersionId },
    data:
      to === "running"
        ? {
            status: "running",
            desiredState: "running",
            scheduleSeq: before.seq + 1,
            consecutiveFailures: 0,
            nextBatchAt: new Date(),
            updatedAt: new Date(),
          }
        : {
            status: "stopped",
            desiredState: "stopped",
            scheduleSeq: before.seq + 1,
            batchStartedAt: null,
            batchWorkerId: null,
            nextBatchAt: null,
            updatedAt: new Date(),
          },
  });
  await recordTransition(tx, pipelineVersionId, {
    action,
    from: before.status,
    to,
    desired: to,
    actor,
    reason,
  });
}
