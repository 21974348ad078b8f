// A team tuning one of its pipeline's rules: severity, threshold (within the kind's range; empty for
// the spec's target where the kind has one), `for` and clear-for durations, reminders, on/off.
// Recorded in the audit log with the rule before and after.
import type { PrismaClient } from "@sluice/db";
import { z } from "zod";
import { recordAuditEvent } from "../audit/record-audit-event";
import { AlertChangeError, type TAlertActor } from "./alert-change";
import { PIPELINE_RULE_KINDS, RULE_KIND_INFO, SEVERITIES } from "./rule-kinds";

const seconds = (field: string, max: number) =>
  z
    .number({ error: `${field}: a whole number of seconds` })
    .int(`${field}: a whole number of seconds`)
    .min(0, `${field}: 0 or more seconds`)
    .max(max, `${field}: at most ${max} seconds`);

export const ZUpdateAlertRuleInput = z
  .object({
    pipeline: z.string().min(1).max(200),
    kind: z.enum(PIPELINE_RULE_KINDS, { error: `kind: one of ${PIPELINE_RULE_KINDS.join(", ")}` }),
    severity: z.enum(SEVERITIES, { error: `severity: one of ${SEVERITIES.join(", ")}` }).optional(),
    threshold: z
      .number({ error: "threshold: a number" })
      .finite("threshold: a finite number")
      .nullable()
      .optional(),
    forSeconds: seconds("forSeconds", 86_400).optional(),
    clearForSeconds: seconds("clearForSeconds", 86_400).optional(),
    repeatSeconds: seconds("repeatSeconds", 7 * 86_400).optional(),
    enabled: z.boolean().optional(),
  })
  .superRefine((v, ctx) => {
    const info = RULE_KIND_INFO[v.kind];
    if (v.threshold === null && !info.specTarget)
      ctx.addIssue({
        code: "custom",
        path: ["threshold"],
        message: `threshold: ${v.kind} needs a threshold (${info.unit})`,
      });
    if (typeof v.threshold === "number" && (v.threshold < info.min || v.threshold > info.max)) {
      ctx.addIssue({
        code: "custom",
        path: ["threshold"],
        message: `threshold: ${v.threshold} makes no sense for ${v.kind}; use ${info.min} to ${info.max} (${info.unit})`,
      });
    }
    if (v.repeatSeconds !== undefined && v.repeatSeconds > 0 && v.repeatSeconds < 60)
      ctx.addIssue({
        code: "custom",
        path: ["repeatSeconds"],
        message: "repeatSeconds: 0 (no reminders) or at least 60",
      });
  });
export type TUpdateAlertRuleInput = z.input<typeof ZUpdateAlertRuleInput>;

export async function updateAlertRule(db: PrismaClient, actor: TAlertActor, input: TUpdateAlertRuleInput) {
  const { pipeline, kind, ...change } = ZUpdateAlertRuleInput.parse(input);
  return db.$transaction(async (tx) => {
    const rule = await tx.alertRule.findFirst({ where: { pipeline: { name: pipeline }, kind } });
    if (!rule)
      throw new AlertChangeError(
        `No ${kind} rule on pipeline "${pipeline}" (its default rules are created on the evaluator's next pass, within seconds of registration).`,
        "not_found",
      );
    const before = {
      severity: rule.severity,
      threshold: rule.threshold,
      forSeconds: rule.forSeconds,
      clearForSeconds: rule.clearForSeconds,
      repeatSeconds: rule.repeatSeconds,
      enabled: rule.enabled,
    };
    const updated = await tx.alertRule.update({
      where: { id: rule.id },
      data: {
        ...change,
        updatedBy: actor.label,
        ...(change.enabled === false ? { pendingSince: null } : {}),
      },
    });
    if (change.enabled === false) {
      // A rule turned off is no longer evaluated, so its open episode would never resolve: it ends now.
      const open = await tx.alertEpisode.findFirst({
        where: { ruleId: rule.id, resolvedAt: null },
        select: { id: true },
      });
      if (open) {
        await tx.alertEpisode.update({
          where: { id: open.id },
          data: { state: "resolved", resolvedAt: new Date(), resolvedBy: actor.label },
        });
        await tx.alertEpisodeEvent.create({
          data: { episodeId: open.id, type: "resolved", actor: actor.label, note: "the rule was turned off" },
        });
      }
    }
    const after = {
      severity: updated.severity,
      threshold: updated.threshold,
      forSeconds: updated.forSeconds,
      clearForSeconds: updated.clearForSeconds,
      repeatSeconds: updated.repeatSeconds,
      enabled: updated.enabled,
    };
    await recordAuditEvent(tx, {
      actorUserId: actor.userId,
      actor: actor.label,
      action: "alert.rule_change",
      target: { type: "alert_rule", id: rule.id, label: `${kind} on ${pipeline}` },
      before,
      after,
      from: actor.from,
    });
    return { id: updated.id, ...after };
  });
}
