// Asking for a checkpoint reset (console, CLI): resolve the target to offsets per partition against
// Kafka now, compute what it does (reset-impact.ts) and store it with the request, so the approver
// sees the same impact the requester saw. A reset that would make the result wrong, or names offsets
// that do not exist, is refused here (audited as refused) and never becomes a request. It resets the
// checkpoint of the version named (the console's `?v=N`, `sluice reset name@2`), else the serving one.
import { z } from "zod";
import type { PrismaClient } from "@sluice/db";
import { findCheckpoint } from "@sluice/engine";
import { recordAuditEvent, type TAuditWho } from "../audit/record-audit-event";
import { findPipelineVersion } from "../pipelines/find-pipeline-version";
import { ChangeRequestError, getChangeRequest, type TChangeRequestView } from "./change-request-view";
import { prismaSqlClient } from "./prisma-sql-client";
import { resetImpact, shapeOfSpec, ZResetState, ZResetTarget } from "./reset-impact";
import type { TTopicOffsets } from "./topic-offsets";

export const ZRequestCheckpointResetInput = z.object({
  pipeline: z.string().min(1, "Name the pipeline").max(200),
  /** The version whose checkpoint moves; without it, the serving one. */
  version: z.number().int().positive("a version number is 1 or more").optional(),
  to: ZResetTarget,
  state: ZResetState.default("keep"),
  reason: z.string().trim().min(1, "Give a reason: the approver reads it").max(2000),
});
export type TRequestCheckpointResetInput = z.input<typeof ZRequestCheckpointResetInput>;

export async function requestCheckpointReset(
  db: PrismaClient,
  offsets: TTopicOffsets,
  who: TAuditWho,
  input: TRequestCheckpointResetInput,
): Promise<TChangeRequestView> {
  const req = ZRequestCheckpointResetInput.parse(input);
  const found = await findPipelineVersion(db, req.pipeline, req.version);
  if (!found?.version)
    throw new ChangeRequestError(
      req.version === undefined
        ? `No pipeline named "${req.pipeline}" with a registered version.`
        : `No version ${req.version} of a pipeline named "${req.pipeline}".`,
      "not_found",
    );
  const version = found.version;
  const topic = (version.spec as { source?: { kafka?: { topic?: string } } }).source?.kafka?.topic;
  if (!topic)
    throw new ChangeRequestError(
      `pipeline "${req.pipeline}" reads no Kafka topic: there is no checkpoint to reset`,
      "invalid",
    );
  const checkpoint = await findCheckpoint(prismaSqlClient(db), version.id);
  const bounds = await offsets.bounds(topic);
  const byTime = req.to.kind === "timestamp" ? await offsets.forTimestamp(topic, req.to.at) : undefined;
  const impact = resetImpact({
    shape: shapeOfSpec(version.spec),
    target: req.to,
    state: req.state,
    checkpoint: checkpoint?.endOffsets ?? {},
    bounds,
    ...(byTime ? { byTime } : {}),
  });
  const target = { type: "pipeline", id: found.pipelineId, label: found.pipeline };
  if (impact.refusals.length > 0) {
    const message = `checkpoint reset refused: ${impact.refusals.join("; ")}`;
    await recordAuditEvent(db, {
      ...who,
      action: "change.request",
      outcome: "refused",
      target,
      reason: req.reason,
      after: {
        kind: "checkpoint_reset",
        version: version.version,
        to: req.to,
        state: req.state,
        refused: message,
      },
    });
    throw new ChangeRequestError(message, "invalid");
  }
  const created = await db.$transaction(async (tx) => {
    const cr = await tx.changeRequest.create({
      data: {
        kind: "checkpoint_reset",
        pipelineId: found.pipelineId,
        pipelineVersionId: version.id,
        requestedById: who.actorUserId,
        requestedBy: who.actor,
        reason: req.reason,
        payload: {
          topic,
          to: req.to.kind === "timestamp" ? { kind: "timestamp", at: req.to.at.toISOString() } : req.to,
          state: req.state,
        },
        impact: JSON.parse(
          JSON.stringify({ ...impact, topic, checkpointBatchId: Number(checkpoint?.lastBatchId ?? -1) }),
        ),
      },
    });
    await recordAuditEvent(tx, {
      ...who,
      action: "change.request",
      target,
      reason: req.reason,
      after: {
        changeRequest: String(cr.id),
        kind: "checkpoint_reset",
        version: version.version,
        to: req.to,
        state: req.state,
        reprocessed: impact.reprocessed,
        skipped: impact.skipped,
      },
    });
    return cr;
  });
  return (await getChangeRequest(db, created.id))!;
}
