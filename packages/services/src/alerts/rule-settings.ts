// What a team may set on a pipeline's rule — severity, threshold (within the kind's range; empty for
// the spec's target where the kind has one), `for` and clear-for, reminders, on/off — and which rule it
// is: the pipeline, the kind and, for a rule watching one output, the output. One schema for changing a
// rule and for adding one for an output, so both refuse the same values with the same words.
import { z } from "zod";
import { PIPELINE_RULE_KINDS, RULE_KIND_INFO, SEVERITIES } from "./rule-kinds";

const seconds = (field: string, max: number) =>
  z
    .number({ error: `${field}: a whole number of seconds` })
    .int(`${field}: a whole number of seconds`)
    .min(0, `${field}: 0 or more seconds`)
    .max(max, `${field}: at most ${max} seconds`);

export const ZRuleSettings = z.object({
  pipeline: z.string().min(1).max(200),
  kind: z.enum(PIPELINE_RULE_KINDS, { error: `kind: one of ${PIPELINE_RULE_KINDS.join(", ")}` }),
  /** The output the rule watches; absent: the pipeline's own rule of that kind. */
  output: z.string().min(1, "output: name one of the pipeline's outputs").max(200).optional(),
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
});
type TRuleSettings = z.infer<typeof ZRuleSettings>;

/** The values no kind accepts, and an output on a kind that is not judged per output. */
export function checkRuleSettings(v: TRuleSettings, ctx: z.RefinementCtx): void {
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
  if (v.output !== undefined && !info.perOutput)
    ctx.addIssue({
      code: "custom",
      path: ["output"],
      message: `output: ${v.kind} watches the pipeline as a whole; a rule for one output is one of ${PIPELINE_RULE_KINDS.filter((k) => RULE_KIND_INFO[k].perOutput).join(", ")}`,
    });
}

/** A rule's settings as the audit log records them before and after a change. */
export function settingsOf(r: {
  severity: string;
  threshold: number | null;
  forSeconds: number;
  clearForSeconds: number;
  repeatSeconds: number;
  enabled: boolean;
}) {
  return {
    severity: r.severity,
    threshold: r.threshold,
    forSeconds: r.forSeconds,
    clearForSeconds: r.clearForSeconds,
    repeatSeconds: r.repeatSeconds,
    enabled: r.enabled,
  };
}
