// A team adding a rule that watches one output of its pipeline (a late_rate rule for the 20-minute
// fraud view, not for the 2-day finance view): the kind must be one judged per output, the output one
// the serving version declares, and a pipeline has one rule per kind and output. The kind's defaults
// fill what is not set. Recorded in the audit log.
import { Prisma, type PrismaClient } from "@sluice/db";
import type { z } from "zod";
import { recordAuditEvent } from "../audit/record-audit-event";
import { declaredOutputs } from "../pipelines/declared-outputs";
import { AlertChangeError, type TAlertActor } from "./alert-change";
import { RULE_KIND_INFO, ruleLabel } from "./rule-kinds";
import { checkRuleSettings, settingsOf, ZRuleSettings } from "./rule-settings";

export const ZCreateAlertRuleInput = ZRuleSettings.required({ output: true }).superRefine(checkRuleSettings);
export type TCreateAlertRuleInput = z.input<typeof ZCreateAlertRuleInput>;

export async function createAlertRule(db: PrismaClient, actor: TAlertActor, input: TCreateAlertRuleInput) {
  const { pipeline, kind, output, ...set } = ZCreateAlertRuleInput.parse(input);
  const p = await db.pipeline.findUnique({
    where: { name: pipeline },
    select: { id: true, servingVersion: { select: { version: true, spec: true } } },
  });
  if (!p) throw new AlertChangeError(`No pipeline named "${pipeline}".`, "not_found");
  const outputs = declaredOutputs(p.servingVersion?.spec);
  if (!outputs.includes(output))
    throw new AlertChangeError(
      outputs.length === 0
        ? `output: "${pipeline}" has no outputs to choose from (its serving version writes one sink): leave output out and tune its own ${kind} rule.`
        : `output: "${pipeline}" v${p.servingVersion!.version} declares no output "${output}"; it declares ${outputs.join(", ")}.`,
      "invalid",
    );
  const defaults = RULE_KIND_INFO[kind].defaults;
  return db.$transaction(async (tx) => {
    const rule = await tx.alertRule
      .create({
        data: {
          pipelineId: p.id,
          kind,
          output,
          severity: set.severity ?? defaults.severity,
          threshold: set.threshold === undefined ? defaults.threshold : set.threshold,
          forSeconds: set.forSeconds ?? defaults.forSeconds,
          clearForSeconds: set.clearForSeconds ?? defaults.clearForSeconds,
          ...(set.repeatSeconds !== undefined ? { repeatSeconds: set.repeatSeconds } : {}),
          enabled: set.enabled ?? true,
          updatedBy: actor.label,
        },
      })
      .catch((err: unknown) => {
        if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002")
          throw new AlertChangeError(
            `"${pipeline}" already has a ${kind} rule for output ${output}: change that one.`,
            "conflict",
          );
        throw err;
      });
    const after = { output, ...settingsOf(rule) };
    await recordAuditEvent(tx, {
      actorUserId: actor.userId,
      actor: actor.label,
      action: "alert.rule_create",
      target: { type: "alert_rule", id: rule.id, label: ruleLabel(kind, output, pipeline) },
      after,
      from: actor.from,
    });
    return { id: rule.id, kind, ...after };
  });
}
