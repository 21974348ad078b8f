// A person acting on an episode: acknowledge it (with a note: reminders stop, it stays open until its
// condition clears) or resolve it by hand (the rule starts over: if the condition still holds it
// fires again after `for`). Each is one transaction with the episode's history and the audit event;
// the episode row is locked, so an evaluation tick in flight waits (and vice versa). Whoever was paged
// hears about it: the acknowledge or resolve goes to the contact points the alert's page went to
// (PagerDuty acknowledges / resolves its incident, Slack and email get a message).
import { rowsOf, tables, type PrismaClient } from "@sluice/db";
import { z } from "zod";
import { recordAuditEvent } from "../audit/record-audit-event";
import { AlertChangeError, type TAlertActor } from "./alert-change";
import { queueNotifications } from "./queue-notifications";
import type { TRuleKind, TSeverity } from "./rule-kinds";

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
    await tellWhoWasPaged(tx, ep, "acknowledge", actor.label, note, now);
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
    await tellWhoWasPaged(tx, ep, "resolve", actor.label, note, now);
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
  await rowsOf(tx, tables.selectFrom("alert_episodes").select("id").where("id", "=", episodeId).forUpdate());
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

/** Queues the acknowledge / resolve for the contact points the page went to (none if nobody was paged). */
async function tellWhoWasPaged(
  tx: TTx,
  ep: Awaited<ReturnType<typeof lockEpisode>>,
  kind: "acknowledge" | "resolve",
  actor: string,
  note: string,
  now: Date,
): Promise<void> {
  if (!ep.notifiedAt) return;
  const queued = await queueNotifications(tx, {
    episodeId: ep.id,
    kind,
    teamIds: [],
    now,
    facts: (team) => ({
      kind,
      episodeId: String(ep.id),
      rule: ep.rule.kind as TRuleKind,
      severity: ep.severity as TSeverity,
      pipeline: ep.rule.pipeline?.name ?? null,
      version: ep.pipelineVersion,
      team,
      startedAt: ep.startedAt.toISOString(),
      value: ep.value,
      threshold: ep.threshold,
      summary: ep.summary,
      actor,
      note: note || null,
      ...(kind === "resolve" ? { resolvedAt: now.toISOString() } : {}),
    }),
  });
  if (queued.queued > 0)
    await tx.alertEpisodeEvent.create({
      data: {
        episodeId: ep.id,
        at: now,
        type: kind === "acknowledge" ? "notified_acknowledged" : "notified_resolved",
        actor: "system",
        note: queued.note,
      },
    });
}
