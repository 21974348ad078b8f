// Deciding a change request: approve (and apply), reject, cancel, comment. Four-eyes: the requester can
// never approve or reject their own request, whatever their role (the role check — who may approve at
// all — is the authorization decision's, action change.approve). Every status move is a conditional
// UPDATE on the row locked FOR UPDATE, so a second approval (a double click, a colleague at the same
// moment) finds it no longer pending: the same approver gets the applied request back (idempotent),
// anyone else a conflict naming who decided. Approval and application are ONE transaction: a crash
// anywhere leaves the request pending and the checkpoint untouched, or both done. A schema change
// whose application is refused for a reason retrying cannot fix (apply-schema-change.ts
// ApplyRefusedError) is rolled back to a savepoint and recorded `failed` with the message.
import { z } from "zod";
import { countOf, firstRowOf, sql, tables, type PrismaClient } from "@sluice/db";
import { recordAuditEvent, type TAuditWho } from "../audit/record-audit-event";
import type { TBatchScheduler } from "../runs/run-pipeline-command";
import { applyCheckpointReset } from "./apply-checkpoint-reset";
import { ApplyRefusedError, applySchemaChange, type TAppliedSchemaChange } from "./apply-schema-change";
import { ChangeRequestError, getChangeRequest, type TChangeRequestView } from "./change-request-view";
import { refuseBesideRollout, staleAgainst } from "./current-version";
import { applyPromotion } from "../rollouts/apply-promotion";
import { promotionGateOfCandidate } from "../rollouts/promotion-gate";

export const ZDecideChangeRequestInput = z.object({
  id: z.coerce.bigint({ error: "id: the change request's number" }),
  /** The pipeline the request is for (the authorization decision's target); must match the request. */
  pipeline: z.string().min(1).max(200),
  note: z.string().trim().max(2000).default(""),
});
export type TDecideChangeRequestInput = z.input<typeof ZDecideChangeRequestInput>;

/** For tests of the crash window: called inside the transaction after the checkpoint was rewritten. */
export interface TDecideHooks {
  beforeCommit?: () => Promise<void>;
  /** Queues the first batch of a schema change's new version at once (else the workers' reconciler does). */
  scheduler?: TBatchScheduler;
}

export async function approveChangeRequest(
  db: PrismaClient,
  who: TAuditWho,
  input: TDecideChangeRequestInput,
  hooks: TDecideHooks = {},
): Promise<TChangeRequestView> {
  const req = ZDecideChangeRequestInput.parse(input);
  const outcome = await db
    .$transaction(
      async (tx) => {
        const cr = await lockRequest(tx, req);
        refuseOwn(cr, who, "approve");
        if (cr.status !== "pending") {
          if ((cr.status === "applied" || cr.status === "approved") && cr.decided_by_id === who.actorUserId)
            return { kind: "again" as const };
          throw new ChangeRequestError(
            `change request #${cr.id} is already ${cr.status}${cr.decided_by ? ` (by ${cr.decided_by})` : ""}: nothing to approve`,
            "conflict",
          );
        }
        const stale = await staleAgainst(tx, cr.pipeline_id, cr.pipeline_version_id);
        if (stale) {
          await countOf(
            tx,
            movePending(cr.id, {
              status: "stale",
              decision_note: `pipeline has a new version (v${stale.version ?? "?"}) since the request`,
            }),
          );
          await recordAuditEvent(tx, {
            ...who,
            action: "change.stale",
            target: targetOf(cr, req),
            reason: req.note,
            after: { changeRequest: String(cr.id), newVersion: stale.version },
          });
          return { kind: "stale" as const, version: stale.version };
        }
        if (cr.kind === "schema_change") await refuseBesideRollout(tx, cr.pipeline_id, req.pipeline);
        // Approved only while the newest reconciliation still compares clean (the workers keep
        // reconciling after the request); refused, the request stays pending.
        if (cr.kind === "promotion") {
          const acceptDifferences = (cr.payload as { acceptDifferences?: boolean } | null)?.acceptDifferences;
          const gate = await promotionGateOfCandidate(tx, cr.pipeline_version_id, {
            acceptDifferences: acceptDifferences === true,
          });
          // Differences found after the request was made (a live topic's late rows, judged at each
          // side's own batch boundaries, can differ): the approver cannot accept them for the
          // requester, but should learn the way on that does not need an abort.
          if (gate?.refusal)
            throw new ChangeRequestError(
              gate.differencesOnly
                ? `${gate.refusal}. If the rollout page explains the differences, the requester can cancel change request #${cr.id} and ask again, accepting them`
                : gate.refusal,
              "conflict",
            );
        }
        const moved = await countOf(tx, movePending(cr.id, decidedBy(who, "approved", req.note)));
        if (moved !== 1)
          throw new ChangeRequestError(
            `change request #${cr.id} was decided by someone else meanwhile`,
            "conflict",
          );
        await recordAuditEvent(tx, {
          ...who,
          action: "change.approve",
          target: targetOf(cr, req),
          reason: req.note,
          after: { changeRequest: String(cr.id), kind: cr.kind },
        });
        if (cr.kind === "schema_change") return applySchemaChangeIn(tx, cr, who, req, hooks);
        if (cr.kind === "promotion") return applyPromotionIn(tx, cr, who, req, hooks);
        if (cr.kind !== "checkpoint_reset")
          throw new ChangeRequestError(`applying a ${cr.kind} request is not supported`, "invalid");
        const applied = await applyCheckpointReset(
          tx,
          {
            id: cr.id,
            pipelineVersionId: cr.pipeline_version_id,
            payload: cr.payload,
            impact: cr.impact,
            requestedBy: cr.requested_by,
          },
          who.actor,
        );
        await countOf(tx, settleApproved(cr.id, "applied", applied));
        await recordAuditEvent(tx, {
          ...who,
          action: "change.apply",
          target: targetOf(cr, req),
          reason: `checkpoint reset of change request #${cr.id}, requested by ${cr.requested_by}`,
          before: { offsets: applied.offsetsBefore, afterBatchId: applied.afterBatchId },
          after: {
            offsets: applied.offsetsAfter,
            stateCleared: applied.stateCleared,
            stateRowsCleared: applied.stateRowsCleared,
          },
        });
        await hooks.beforeCommit?.();
        return { kind: "applied" as const };
      },
      { timeout: 15_000, maxWait: 10_000 },
    )
    .catch(async (err: unknown) => {
      if (err instanceof ChangeRequestError) await auditRefused(db, who, "change.approve", req, err);
      throw err;
    });
  if (outcome.kind === "failed")
    throw new ChangeRequestError(
      `change request #${req.id} failed and is recorded as failed: ${outcome.message}`,
      "conflict",
    );
  if (outcome.kind === "applied" && "schedule" in outcome && outcome.schedule && hooks.scheduler) {
    // After the commit: the new version's run row says running; queueing its turn now only saves the reconciler's wait.
    await hooks.scheduler.scheduleTurn({ ...outcome.schedule, delayMs: 0 }).catch(() => undefined);
  }
  if (outcome.kind === "stale") {
    throw new ChangeRequestError(
      `change request #${req.id} is stale: pipeline "${req.pipeline}" got a new version (v${outcome.version}) after it was made, so its impact no longer holds. Request it again against the current version.`,
      "conflict",
    );
  }
  return (await getChangeRequest(db, req.id))!;
}

export async function rejectChangeRequest(
  db: PrismaClient,
  who: TAuditWho,
  input: TDecideChangeRequestInput,
): Promise<TChangeRequestView> {
  return decideWithoutApplying(db, who, input, "rejected", "reject");
}

/** The requester withdraws their request (an admin may cancel anyone's). */
export async function cancelChangeRequest(
  db: PrismaClient,
  who: TAuditWho & { isAdmin: boolean },
  input: TDecideChangeRequestInput,
): Promise<TChangeRequestView> {
  return decideWithoutApplying(db, who, input, "cancelled", "cancel");
}

async function decideWithoutApplying(
  db: PrismaClient,
  who: TAuditWho & { isAdmin?: boolean },
  input: TDecideChangeRequestInput,
  to: "rejected" | "cancelled",
  verb: "reject" | "cancel",
): Promise<TChangeRequestView> {
  const req = ZDecideChangeRequestInput.parse(input);
  await db
    .$transaction(async (tx) => {
      if (verb === "reject" && !req.note)
        throw new ChangeRequestError("note: say why it is rejected: the requester reads it", "invalid");
      const cr = await lockRequest(tx, req);
      if (verb === "reject") refuseOwn(cr, who, "reject");
      if (verb === "cancel" && cr.requested_by_id !== who.actorUserId && !who.isAdmin)
        throw new ChangeRequestError(
          `only ${cr.requested_by}, who asked for change request #${cr.id}, (or an admin) may cancel it`,
          "forbidden",
        );
      if (cr.status === to && cr.decided_by_id === who.actorUserId) return;
      if (cr.status !== "pending")
        throw new ChangeRequestError(
          `change request #${cr.id} is already ${cr.status}${cr.decided_by ? ` (by ${cr.decided_by})` : ""}: it cannot be ${to}`,
          "conflict",
        );
      await countOf(tx, movePending(cr.id, decidedBy(who, to, req.note)));
      await recordAuditEvent(tx, {
        ...who,
        action: `change.${verb}`,
        target: targetOf(cr, req),
        reason: req.note,
        after: { changeRequest: String(cr.id), status: to },
      });
    })
    .catch(async (err: unknown) => {
      if (err instanceof ChangeRequestError) await auditRefused(db, who, `change.${verb}`, req, err);
      throw err;
    });
  return (await getChangeRequest(db, req.id))!;
}

export const ZCommentChangeRequestInput = z.object({
  id: z.coerce.bigint(),
  pipeline: z.string().min(1).max(200),
  body: z.string().trim().min(1, "Write a comment").max(4000),
});

export async function commentOnChangeRequest(
  db: PrismaClient,
  who: TAuditWho,
  input: z.input<typeof ZCommentChangeRequestInput>,
): Promise<TChangeRequestView> {
  const req = ZCommentChangeRequestInput.parse(input);
  await db.$transaction(async (tx) => {
    const cr = await lockRequest(tx, { id: req.id, pipeline: req.pipeline });
    await tx.changeRequestComment.create({
      data: { changeRequestId: cr.id, authorId: who.actorUserId, author: who.actor, body: req.body },
    });
    await recordAuditEvent(tx, {
      ...who,
      action: "change.comment",
      target: targetOf(cr, req),
      reason: req.body,
      after: { changeRequest: String(cr.id) },
    });
  });
  return (await getChangeRequest(db, req.id))!;
}

type TTxOf = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

async function lockRequest(tx: TTxOf, req: { id: bigint; pipeline: string }) {
  const cr = await firstRowOf(
    tx,
    tables
      .selectFrom("change_requests as c")
      .innerJoin("pipelines as p", "p.id", "c.pipeline_id")
      .select([
        "c.id",
        "c.kind",
        "c.status",
        "c.pipeline_id",
        "c.pipeline_version_id",
        "c.requested_by_id",
        "c.requested_by",
        "c.reason",
        "c.decided_by_id",
        "c.decided_by",
        "c.payload",
        "c.impact",
      ])
      .where("c.id", "=", req.id)
      .where("p.name", "=", req.pipeline)
      .forUpdate("c"),
  );
  if (!cr)
    throw new ChangeRequestError(`no change request #${req.id} for pipeline "${req.pipeline}"`, "not_found");
  return cr;
}
type TLocked = Awaited<ReturnType<typeof lockRequest>>;

/** A decision: the move out of pending, by whom, with their note. */
const decidedBy = (who: TAuditWho, status: "approved" | "rejected" | "cancelled", note: string) => ({
  status,
  decided_by_id: who.actorUserId,
  decided_by: who.actor,
  decided_at: sql<Date>`now()`,
  decision_note: note,
});

/** The conditional UPDATE that is the concurrency control: it moves the request only while still pending. */
const movePending = (
  id: bigint,
  set: { status: string; decision_note: string } & Omit<Partial<ReturnType<typeof decidedBy>>, "status">,
) =>
  tables
    .updateTable("change_requests")
    .set({ ...set, updated_at: sql<Date>`now()` })
    .where("id", "=", id)
    .where("status", "=", "pending");

/** An approved request applied (with what applying did) or failed (with why). */
const settleApproved = (id: bigint, status: "applied" | "failed", result: object) =>
  tables
    .updateTable("change_requests")
    .set({
      status,
      ...(status === "applied" ? { applied_at: sql<Date>`now()` } : {}),
      updated_at: sql<Date>`now()`,
      result,
    })
    .where("id", "=", id)
    .where("status", "=", "approved");

function refuseOwn(cr: TLocked, who: TAuditWho, verb: string): void {
  if (cr.requested_by_id !== null && cr.requested_by_id === who.actorUserId) {
    throw new ChangeRequestError(
      `you asked for change request #${cr.id}: someone else must ${verb} it (four-eyes rule, whatever your role). Cancel it if it is no longer wanted.`,
      "forbidden",
    );
  }
}

const targetOf = (cr: TLocked, req: { pipeline: string }) => ({
  type: "pipeline",
  id: cr.pipeline_id,
  label: req.pipeline,
});

async function auditRefused(
  db: PrismaClient,
  who: TAuditWho,
  action: string,
  req: { id: bigint; pipeline: string; note?: string },
  err: ChangeRequestError,
): Promise<void> {
  await recordAuditEvent(db, {
    ...who,
    action,
    outcome: "refused",
    target: { type: "pipeline", label: req.pipeline },
    reason: err.message,
    after: { changeRequest: String(req.id) },
  }).catch(() => undefined);
}

async function applySchemaChangeIn(
  tx: TTxOf,
  cr: TLocked,
  who: TAuditWho,
  req: { id: bigint; pipeline: string; note: string },
  hooks: TDecideHooks,
) {
  // A savepoint: a refusal that retrying cannot fix undoes the apply's work, keeps the approval and
  // records the request as failed; any other error rolls everything back (still pending, retryable).
  // Transaction control names no table: Kysely's builder has no statement for it (its savepoints need its own driver).
  await tx.$executeRaw`SAVEPOINT schema_apply`;
  let applied: TAppliedSchemaChange;
  try {
    applied = await applySchemaChange(
      tx,
      {
        id: cr.id,
        pipelineVersionId: cr.pipeline_version_id,
        payload: cr.payload,
        requestedBy: cr.requested_by,
        reason: cr.reason,
      },
      who.actor,
    );
  } catch (err) {
    if (!(err instanceof ApplyRefusedError)) throw err;
    await tx.$executeRaw`ROLLBACK TO SAVEPOINT schema_apply`;
    await countOf(tx, settleApproved(cr.id, "failed", { error: err.message }));
    await recordAuditEvent(tx, {
      ...who,
      action: "change.apply",
      outcome: "refused",
      target: targetOf(cr, req),
      reason: err.message.slice(0, 2000),
      after: { changeRequest: String(cr.id), kind: cr.kind, status: "failed" },
    });
    return { kind: "failed" as const, message: err.message };
  }
  await countOf(tx, settleApproved(cr.id, "applied", applied));
  await recordAuditEvent(tx, {
    ...who,
    action: "change.apply",
    target: targetOf(cr, req),
    reason: `schema change of change request #${cr.id}, requested by ${cr.requested_by}`,
    before: {
      version: applied.previousVersion,
      offsets: applied.offsets,
      afterBatchId: applied.afterBatchId,
    },
    after: {
      version: applied.version,
      offsets: applied.offsets,
      sinkChanges: applied.sinkChanges,
      run: applied.run,
    },
  });
  await hooks.beforeCommit?.();
  return {
    kind: "applied" as const,
    schedule:
      applied.run === "running" ? { pipelineVersionId: applied.pipelineVersionId, seq: 1 } : undefined,
  };
}

/** A rollout's promotion (rollouts/apply-promotion.ts), refused like a schema change: recorded failed, nothing switched. */
async function applyPromotionIn(
  tx: TTxOf,
  cr: TLocked,
  who: TAuditWho,
  req: { id: bigint; pipeline: string; note: string },
  hooks: TDecideHooks,
) {
  // Transaction control names no table: Kysely's builder has no statement for it (its savepoints need its own driver).
  await tx.$executeRaw`SAVEPOINT promotion_apply`;
  let applied: Awaited<ReturnType<typeof applyPromotion>>;
  try {
    applied = await applyPromotion(
      tx,
      {
        id: cr.id,
        pipelineVersionId: cr.pipeline_version_id,
        payload: cr.payload,
        requestedBy: cr.requested_by,
      },
      who,
      req.note,
    );
  } catch (err) {
    if (!(err instanceof ApplyRefusedError)) throw err;
    await tx.$executeRaw`ROLLBACK TO SAVEPOINT promotion_apply`;
    await countOf(tx, settleApproved(cr.id, "failed", { error: err.message }));
    await recordAuditEvent(tx, {
      ...who,
      action: "change.apply",
      outcome: "refused",
      target: targetOf(cr, req),
      reason: err.message.slice(0, 2000),
      after: { changeRequest: String(cr.id), kind: cr.kind, status: "failed" },
    });
    return { kind: "failed" as const, message: err.message };
  }
  await countOf(tx, settleApproved(cr.id, "applied", applied));
  await recordAuditEvent(tx, {
    ...who,
    action: "change.apply",
    target: targetOf(cr, req),
    reason: `promotion of change request #${cr.id}, requested by ${cr.requested_by}`,
    before: { serving: applied.blue },
    after: { serving: applied.green, rollout: applied.rolloutId },
  });
  await hooks.beforeCommit?.();
  return { kind: "applied" as const, schedule: undefined };
}
