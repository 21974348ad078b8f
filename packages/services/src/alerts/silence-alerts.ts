// Silences: notifications off for one pipeline's rules (or one rule of it, or a fleet rule) until an
// expiry that is required — a silence nobody remembers to lift is how pages get lost. Alerts keep
// being evaluated and shown while silenced. Ending one early is recorded (who, when).
import type { PrismaClient } from "@sluice/db";
import { z } from "zod";
import { recordAuditEvent } from "../audit/record-audit-event";
import { AlertChangeError, type TAlertActor } from "./alert-change";
import { RULE_KINDS } from "./rule-kinds";

/** The longest silence: a week. */
export const MAX_SILENCE_MS = 7 * 24 * 3600_000;

export const ZSilenceAlertsInput = z
  .object({
    /** null: a fleet rule (then `kind` is required). */
    pipeline: z.string().min(1).max(200).nullable(),
    /** One rule of the pipeline; absent: all of its rules. */
    kind: z.enum(RULE_KINDS, { error: `kind: one of ${RULE_KINDS.join(", ")}` }).optional(),
    expiresAt: z.coerce.date({
      error: "expiresAt: a silence needs an expiry (a date and time, at most 7 days ahead)",
    }),
    reason: z
      .string({ error: "reason: say why (e.g. 'maintenance of the source until 14:00')" })
      .trim()
      .min(3, "reason: say why (e.g. 'maintenance of the source until 14:00')")
      .max(500),
  })
  .superRefine((v, ctx) => {
    const ms = v.expiresAt.getTime() - Date.now();
    if (!(ms > 0))
      ctx.addIssue({ code: "custom", path: ["expiresAt"], message: "expiresAt: must be in the future" });
    else if (ms > MAX_SILENCE_MS)
      ctx.addIssue({
        code: "custom",
        path: ["expiresAt"],
        message: "expiresAt: at most 7 days ahead; silence again when it ends if you must",
      });
    if (v.pipeline === null && !v.kind)
      ctx.addIssue({
        code: "custom",
        path: ["kind"],
        message: "kind: a fleet silence names the fleet rule (worker_heartbeat_missing or no_worker_alive)",
      });
  });
export type TSilenceAlertsInput = z.input<typeof ZSilenceAlertsInput>;

export async function silenceAlerts(
  db: PrismaClient,
  actor: TAlertActor,
  input: TSilenceAlertsInput,
): Promise<{ id: string; expiresAt: Date }> {
  const v = ZSilenceAlertsInput.parse(input);
  return db.$transaction(async (tx) => {
    const pipeline = v.pipeline
      ? await tx.pipeline.findUnique({ where: { name: v.pipeline }, select: { id: true } })
      : null;
    if (v.pipeline && !pipeline)
      throw new AlertChangeError(`No pipeline named "${v.pipeline}".`, "not_found");
    const rule = v.kind
      ? await tx.alertRule.findFirst({
          // The pipeline's own rule of the kind, not one watching a single output.
          where: { pipelineId: pipeline?.id ?? null, kind: v.kind, output: null },
          select: { id: true },
        })
      : null;
    if (v.kind && !rule)
      throw new AlertChangeError(
        `No ${v.kind} rule on ${v.pipeline ?? "the fleet"} (its rules are created on the evaluator's next pass).`,
        "not_found",
      );
    const s = await tx.alertSilence.create({
      data: {
        pipelineId: rule ? null : pipeline!.id,
        ruleId: rule?.id ?? null,
        reason: v.reason,
        createdBy: actor.label,
        expiresAt: v.expiresAt,
      },
    });
    await recordAuditEvent(tx, {
      actorUserId: actor.userId,
      actor: actor.label,
      action: "alert.silence",
      target: {
        type: "alert_silence",
        id: s.id,
        label: `${v.kind ?? "all rules"} on ${v.pipeline ?? "the fleet"}`,
      },
      reason: v.reason,
      after: { expiresAt: v.expiresAt.toISOString(), kind: v.kind ?? null },
      from: actor.from,
    });
    return { id: s.id, expiresAt: s.expiresAt };
  });
}

export const ZEndSilenceInput = z.object({
  silenceId: z.string().min(1, "silenceId: which silence").max(100),
  /** The pipeline it silences (authorization is decided on it); null for a fleet silence. */
  pipeline: z.string().min(1).max(200).nullable(),
});
export type TEndSilenceInput = z.input<typeof ZEndSilenceInput>;

export async function endSilence(
  db: PrismaClient,
  actor: TAlertActor,
  input: TEndSilenceInput,
): Promise<{ id: string }> {
  const v = ZEndSilenceInput.parse(input);
  return db.$transaction(async (tx) => {
    const s = await tx.alertSilence.findUnique({
      where: { id: v.silenceId },
      include: {
        pipeline: { select: { name: true } },
        rule: { select: { kind: true, pipeline: { select: { name: true } } } },
      },
    });
    const pipeline = s?.pipeline?.name ?? s?.rule?.pipeline?.name ?? null;
    if (!s || pipeline !== v.pipeline)
      throw new AlertChangeError(
        `No silence ${v.silenceId}${v.pipeline ? ` on pipeline "${v.pipeline}"` : ""}.`,
        "not_found",
      );
    if (s.endedAt || s.expiresAt <= new Date())
      throw new AlertChangeError(
        `That silence already ended${s.endedBy ? ` (by ${s.endedBy})` : ""}.`,
        "conflict",
      );
    await tx.alertSilence.update({
      where: { id: s.id },
      data: { endedAt: new Date(), endedBy: actor.label },
    });
    await recordAuditEvent(tx, {
      actorUserId: actor.userId,
      actor: actor.label,
      action: "alert.unsilence",
      target: {
        type: "alert_silence",
        id: s.id,
        label: `${s.rule?.kind ?? "all rules"} on ${pipeline ?? "the fleet"}`,
      },
      from: actor.from,
    });
    return { id: s.id };
  });
}
