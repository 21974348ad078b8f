// A team tuning one of its pipeline's rules (rule-settings.ts: what may be set), its own or one watching
// an output. Recorded in the audit log with the rule before and after.
import type { PrismaClient } from "@sluice/db";
import type { z } from "zod";
import { recordAuditEvent } from "../audit/record-audit-event";
import { AlertChangeError, type TAlertActor } from "./alert-change";
import { ruleLabel } from "./rule-kinds";
import { checkRuleSettings, settingsOf, ZRuleSettings } from "./rule-settings";

export const ZUpdateAlertRuleInput = ZRuleSettings.superRefine(checkRuleSettings);
export type TUpdateAlertRuleInput = z.input<typeof ZUpdateAlertRuleInput>;

export async function updateAlertRule(db: PrismaClient, actor: TAlertActor, input: TUpdateAlertRuleInput) {
  const { pipeline, kind, output, ...change } = ZUpdateAlertRuleInput.parse(input);
  return db.$transaction(async (tx) => {
    const rule = await tx.alertRule.findFirst({
      where: { pipeline: { name: pipeline }, kind, output: output ?? null },
    });
    if (!rule)
      throw new AlertChangeError(
        output === undefined
          ? `No ${kind} rule on pipeline "${pipeline}" (its default rules are created on the evaluator's next pass, within seconds of registration).`
          : `No ${kind} rule for output ${output} of pipeline "${pipeline}": add one first.`,
        "not_found",
      );
    const before = settingsOf(rule);
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
    const after = settingsOf(updated);
    await recordAuditEvent(tx, {
      actorUserId: actor.userId,
      actor: actor.label,
      action: "alert.rule_change",
      target: { type: "alert_rule", id: rule.id, label: ruleLabel(kind, rule.output, pipeline) },
      before,
      after,
      from: actor.from,
    });
    return { id: updated.id, ...after };
  });
}
