// A person acting on an episode: acknowledge it (with a note: reminders stop, it stays open until its
// condition clears) or resolve it by hand (the rule starts over: if the condition still holds it
// fires again after `for`). Each is one transaction with the episode's history and the audit event;
// the episode row is locked, so an evaluation tick in flight waits (and vice versa).
import type { PrismaClient } from "@sluice/db";
import { z } from "zod";
import { recordAuditEvent } from "../audit/record-audit-event";
import { AlertChangeError, type TAlertActor } from "./alert-change";

export const ZRespondToAlertInput = z.object({
  episodeId: z.coerce
    .bigint({ error: "episodeId: the alert's number, e.g. 42" })
    .positive("episodeId: the alert's number, e.g. 42"),
  /** The pipeline the caller believes it belongs to (authorization is decided on it); null for fleet alerts. */
  pipeline: z.string().min(1).max(200).nullable(),
  note: z.string().trim().max(2000, "note: at most 2000 characters").default(""),
});
export type TRespondToAlertInput = z.input<typeof ZRespondToAlertInput>;

export async function acknowledgeAlert(
  db: PrismaClient,
  actor: TAlertActor,
  input: TRespondToAlertInput,
): Promise<{ episodeId: string; state: string }> {
  const { episodeId, pipeline, note } = ZRespondToAlertInput.parse(input);
  return db.$transaction(async (tx) => {
    const ep = await lockEpisode(tx, episodeId, pipeline);
    if (ep.state === "resolved")
      throw new AlertChangeError(
        `Alert #${episodeId} is already resolved; nothing to acknowledge.`,
        "conflict",
      );
    if (ep.state === "acknowledged")
      throw new AlertChangeError(
        `Alert #${episodeId} was already acknowledged by ${ep.acknowledgedBy}.`,
        "conflict",
      );
    const now = new Date();
    await tx.alertEpisode.update({
      where: { id: episodeId },
      data: { state: "acknowledged", acknowledgedAt: now, acknowledgedBy: actor.label, ackNote: note },
    });
    await tx.alertEpisodeEvent.create({
      data: { episodeId, at: now, type: "acknowledged", actor: actor.label, note },
    });
    await recordAuditEvent(tx, {
      actorUserId: actor.userId,
      actor: actor.label,
      action: "alert.acknowledge",
      target: { type: "alert", id: String(episodeId), label: ep.label },
      reason: note,
      before: { state: ep.state },
      after: { state: "acknowledged" },
      from: actor.from,
    });
    return { episodeId: String(episodeId), state: "acknowledged" };
  });
}

export async function resolveAlert(
  db: PrismaClient,
  actor: TAlertActor,
  input: TRespondToAlertInput,
): Promise<{ episodeId: string; state: string }> {
  const { episodeId, pipeline, note } = ZRespondToAlertInput.parse(input);
  return db.$transaction(async (tx) => {
    const ep = await lockEpisode(tx, episodeId, pipeline);
    if (ep.state === "resolved")
      throw new AlertChangeError(
        `Alert #${episodeId} is already resolved (by ${ep.resolvedBy}).`,
        "conflict",
      );
    const now = new Date();
    await tx.alertEpisode.update({
      where: { id: episodeId },
      data: { state: "resolved", resolvedAt: now, resolvedBy: actor.label },
    });
    // `for` counts again from now: a condition that still holds fires a new episode after it.
    await tx.alertRule.update({ where: { id: ep.ruleId }, data: { pendingSince: null } });
    await tx.alertEpisodeEvent.create({
      data: { episodeId, at: now, type: "resolved", actor: actor.label, note },
    });
    await recordAuditEvent(tx, {
      actorUserId: actor.userId,
      actor: actor.label,
      action: "alert.resolve",
      target: { type: "alert", id: String(episodeId), label: ep.label },
      reason: note,
      before: { state: ep.state },
      after: { state: "resolved" },
      from: actor.from,
    });
    return { episodeId: String(episodeId), state: "resolved" };
  });
}

type TTx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

async function lockEpisode(tx: TTx, episodeId: bigint, pipeline: string | null) {
  await tx.$queryRaw`SELECT id FROM alert_episodes WHERE id = ${episodeId} FOR UPDATE`;
  const ep = await tx.alertEpisode.findUnique({
    where: { id: episodeId },
    include: { rule: { select: { kind: true, pipeline: { select: { name: true } } } } },
  });
  const actual = ep?.rule.pipeline?.name ?? null;
  // The caller was authorized for `pipeline`: an episode of another pipeline is not theirs to touch.
  if (!ep || actual !== pipeline)
    throw new AlertChangeError(
      `No alert #${episodeId}${pipeline ? ` on pipeline "${pipeline}"` : " on the fleet"}.`,
      "not_found",
    );
  return { ...ep, label: `${ep.rule.kind} on ${actual ?? "the fleet"}` };
}
