// Asking to promote a rollout's candidate (console, `sluice rollout promote <name>`): a change request
// of kind `promotion` against green, which a second person approves (decide-change-request.ts, never
// the requester); approving applies it (apply-promotion.ts). The newest reconciliation of the two
// versions is attached. Refused unless that reconciliation is clean (promotion-gate.ts), and checked
// again when a second person approves (decide-change-request.ts).
import { z } from "zod";
import type { PrismaClient } from "@sluice/db";
import { recordAuditEvent, type TAuditWho } from "../audit/record-audit-event";
import { getChangeRequest, type TChangeRequestView } from "../change-requests/change-request-view";
import { findRollout } from "./find-rollout";
import { promotionGate } from "./promotion-gate";
import { RolloutError } from "./rollout-error";

export const ZRolloutStepInput = z.object({
  pipeline: z.string().min(1, "Name the pipeline").max(200),
  reason: z.string().trim().min(1, "Give a reason").max(2000),
});
export type TRolloutStepInput = z.input<typeof ZRolloutStepInput>;

/**
 * `acceptDifferences`: the requester read the newest reconciliation's differences (what explains them:
 * lateness decided by different batch boundaries, say) and asks to promote anyway; the approver sees
 * that in the request. Without it any difference refuses the request.
 */
export const ZRequestPromotionInput = ZRolloutStepInput.extend({
  acceptDifferences: z.boolean().default(false),
});
export type TRequestPromotionInput = z.input<typeof ZRequestPromotionInput>;

export async function requestPromotion(
  db: PrismaClient,
  who: TAuditWho,
  input: TRequestPromotionInput,
): Promise<TChangeRequestView> {
  const req = ZRequestPromotionInput.parse(input);
  const id = await db.$transaction(async (tx) => {
    const rollout = await findRollout(tx, req.pipeline, { lock: true });
    if (rollout?.state !== "running")
      throw new RolloutError(`${req.pipeline} has no rollout running: nothing to promote`, "not_found");
    const pending = await tx.changeRequest.findFirst({
      where: { kind: "promotion", pipelineId: rollout.pipelineId, status: { in: ["pending", "approved"] } },
      select: { id: true },
    });
    if (pending)
      throw new RolloutError(
        `promotion of ${req.pipeline} is already requested (change request #${pending.id})`,
        "conflict",
      );
    // Refused unless the newest reconciliation of every output compares clean (promotion-gate.ts).
    const gate = await promotionGate(tx, rollout, { acceptDifferences: req.acceptDifferences });
    if (gate.refusal) throw new RolloutError(gate.refusal, "conflict");
    const accepted = gate.reconciliations.filter(
      (r) => (r.onlyBlue ?? 0) + (r.onlyGreen ?? 0) + (r.differing ?? 0) > 0,
    );
    const impact = {
      acceptedDifferences: accepted.map(
        (r) =>
          `${r.output === "" ? "" : `output ${r.output}: `}reconciliation #${r.id}: ${r.differing ?? 0} keys differ, ${r.onlyBlue ?? 0} only in blue, ${r.onlyGreen ?? 0} only in green — accepted by ${who.actor}`,
      ),
      blue: rollout.blue.version,
      green: rollout.green.version,
      reconciliations: gate.reconciliations,
      warnings: gate.reconciliations
        .filter((r) => r.notCompared.length > 0)
        .map(
          (r) =>
            `${r.output === "" ? "" : `output ${r.output}: `}not compared (see the reconciliation for why): ${r.notCompared.join(", ")}`,
        ),
    };
    const cr = await tx.changeRequest.create({
      data: {
        kind: "promotion",
        pipelineId: rollout.pipelineId,
        pipelineVersionId: rollout.green.pipelineVersionId,
        requestedById: who.actorUserId,
        requestedBy: who.actor,
        reason: req.reason,
        payload: {
          rolloutId: String(rollout.id),
          blue: rollout.blue.version,
          green: rollout.green.version,
          acceptDifferences: req.acceptDifferences,
        },
        impact,
      },
    });
    await tx.rollout.update({
      where: { id: rollout.id },
      data: { promotionRequestId: cr.id, updatedAt: new Date() },
    });
    await recordAuditEvent(tx, {
      ...who,
      action: "change.request",
      target: { type: "pipeline", id: rollout.pipelineId, label: req.pipeline },
      reason: req.reason,
      after: { changeRequest: String(cr.id), kind: "promotion", rollout: String(rollout.id), ...impact },
    });
    return cr.id;
  });
  return (await getChangeRequest(db, id))!;
}
