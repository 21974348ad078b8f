// Rolling back a promoted rollout (console, `sluice rollout rollback <name>`): the same atomic switch
// as the promotion, back — green's run stops and its runners are fenced, the serving views move to
// blue's physical tables again, blue runs again from its own checkpoint (its state was kept) — in one
// transaction with the audit event. Green's tables and state are kept, as blue's were (for the
// rollout's keepPreviousHours: then retire-kept-versions.ts drops them, and no rollback is possible
// once blue's were dropped); the stopped side's pending change requests become stale.
//
// Aborting a running rollout (`sluice rollout abort <name>`): green stops for good (superseded),
// its state and its physical tables are dropped; blue, which never stopped serving, is untouched.
import { countOf, sql, tables, type PrismaClient } from "@sluice/db";
import { ConfigurationError, retireVersion, switchServing } from "@sluice/engine";
import { recordAuditEvent, type TAuditWho } from "../audit/record-audit-event";
import { staleRequestsOf } from "../change-requests/current-version";
import { prismaSqlClient } from "../change-requests/prisma-sql-client";
import type { TBatchScheduler } from "../runs/run-pipeline-command";
import { findRollout, type TRolloutView } from "./find-rollout";
import { ZRolloutStepInput, type TRolloutStepInput } from "./request-promotion";
import { RolloutError } from "./rollout-error";
import { setRun } from "./rollout-runs";

export async function rollbackRollout(
  db: PrismaClient,
  who: TAuditWho,
  input: TRolloutStepInput,
  opts: { scheduler?: TBatchScheduler } = {},
): Promise<TRolloutView> {
  const req = ZRolloutStepInput.parse(input);
  const seq = await db.$transaction(
    async (tx) => {
      const rollout = await findRollout(tx, req.pipeline, { lock: true });
      if (!rollout) throw new RolloutError(`${req.pipeline} has no rollout`, "not_found");
      if (rollout.state !== "promoted")
        throw new RolloutError(
          `rollout #${rollout.id} of ${req.pipeline} is ${rollout.state}: only a promoted rollout is rolled back${rollout.state === "running" ? " (abort a running one)" : ""}`,
          "conflict",
        );
      if (rollout.previousDroppedAt)
        throw new RolloutError(
          `rollout #${rollout.id} of ${req.pipeline} can no longer be rolled back: version ${rollout.blue.version}'s state and tables were dropped at ${rollout.previousDroppedAt.toISOString()}, ${rollout.keepPreviousHours} hours after the promotion. Start a rollout of its spec instead.`,
          "conflict",
        );
      const why = `rollout #${rollout.id} rolled back to version ${rollout.blue.version}: ${req.reason}`;
      await setRun(tx, rollout.green.pipelineVersionId, "stopped", "rolled_back", who.actor, why);
      await setRun(tx, rollout.blue.pipelineVersionId, "running", "rollback", who.actor, why);
      const staleRequests = await staleRequestsOf(
        tx,
        rollout.green.pipelineVersionId,
        `version ${rollout.green.version} stopped serving: rollout #${rollout.id} was rolled back to version ${rollout.blue.version}`,
      );
      await countOf(tx, decideRollout(rollout.id, "promoted", "rolled_back", who.actor, req.reason));
      await recordAuditEvent(tx, {
        ...who,
        action: "rollout.rollback",
        target: { type: "pipeline", id: rollout.pipelineId, label: req.pipeline },
        reason: req.reason,
        before: { serving: rollout.green.version },
        after: { serving: rollout.blue.version, rollout: String(rollout.id), staleRequests },
      });
      const run = await tx.pipelineRun.findUniqueOrThrow({
        where: { pipelineVersionId: rollout.blue.pipelineVersionId },
        select: { scheduleSeq: true },
      });
      // Last, as in a promotion: readers of the serving names wait on the views' lock until the commit.
      try {
        await switchServing(prismaSqlClient(tx), {
          from: rollout.green.pipelineVersionId,
          to: rollout.blue.pipelineVersionId,
          why: "rolled_back",
        });
      } catch (err) {
        if (err instanceof ConfigurationError) throw new RolloutError(err.message, "conflict");
        throw err;
      }
      return { blue: rollout.blue.pipelineVersionId, seq: run.scheduleSeq };
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
  await opts.scheduler
    ?.scheduleTurn({ pipelineVersionId: seq.blue, seq: seq.seq, delayMs: 0 })
    .catch(() => undefined);
  return (await findRollout(db, req.pipeline))!;
}

export async function abortRollout(
  db: PrismaClient,
  who: TAuditWho,
  input: TRolloutStepInput,
): Promise<TRolloutView & { dropped: string[] }> {
  const req = ZRolloutStepInput.parse(input);
  const dropped = await db.$transaction(
    async (tx) => {
      const rollout = await findRollout(tx, req.pipeline, { lock: true });
      if (rollout?.state !== "running")
        throw new RolloutError(
          `${req.pipeline} has no rollout running${rollout ? ` (rollout #${rollout.id} is ${rollout.state}${rollout.state === "promoted" ? ": roll it back instead" : ""})` : ""}: nothing to abort`,
          rollout ? "conflict" : "not_found",
        );
      const why = `rollout #${rollout.id} aborted: ${req.reason}`;
      await setRun(tx, rollout.green.pipelineVersionId, "stopped", "aborted", who.actor, why);
      const droppedTables = await retireVersion(prismaSqlClient(tx), {
        retired: rollout.green.pipelineVersionId,
        by: rollout.blue.pipelineVersionId,
        why: "aborted",
      });
      await countOf(
        tx,
        tables
          .updateTable("change_requests")
          .set({
            status: "cancelled",
            updated_at: sql`now()`,
            decision_note: `rollout #${rollout.id} was aborted`,
          })
          .where("kind", "=", "promotion")
          .where("pipeline_version_id", "=", rollout.green.pipelineVersionId)
          .where("status", "=", "pending"),
      );
      const staleRequests = await staleRequestsOf(
        tx,
        rollout.green.pipelineVersionId,
        `rollout #${rollout.id} was aborted: version ${rollout.green.version} never runs again`,
      );
      await countOf(tx, decideRollout(rollout.id, "running", "aborted", who.actor, req.reason));
      await recordAuditEvent(tx, {
        ...who,
        action: "rollout.abort",
        target: { type: "pipeline", id: rollout.pipelineId, label: req.pipeline },
        reason: req.reason,
        after: {
          rollout: String(rollout.id),
          green: rollout.green.version,
          droppedTables,
          staleRequests,
        },
      });
      return droppedTables;
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
  return { ...(await findRollout(db, req.pipeline))!, dropped };
}

/** The rollout moves out of `from` (only if it is still there), with who decided and why. */
const decideRollout = (id: bigint, from: string, to: string, by: string, reason: string) =>
  tables
    .updateTable("rollouts")
    .set({
      state: to,
      decided_by: by,
      decided_at: sql`now()`,
      decision_reason: reason,
      updated_at: sql`now()`,
    })
    .where("id", "=", id)
    .where("state", "=", from);
