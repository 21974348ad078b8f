import { ZCheckDraftInput, ZDryRunDraftInput, ZSubmitDraftInput } from "@sluice/services";
import { parseSpec } from "@sluice/pipeline-spec";
import { z } from "zod";

export { ZCheckDraftInput, ZDryRunDraftInput, ZSubmitDraftInput };

export const ZDraftStartInputSchema = z.object({
  /** Start from this pipeline's latest version; without it, from the template. */
  pipeline: z.string().min(1).max(200).optional(),
  topic: z.string().max(249).optional(),
});

export const ZPipelineHistoryInputSchema = z.object({
  pipeline: z.string().min(1, "Name the pipeline").max(200),
});
export const ZVersionDiffInputSchema = ZPipelineHistoryInputSchema.extend({
  from: z.number().int().positive(),
  to: z.number().int().positive(),
});

/** The team a valid draft would belong to, for the authorization decision (the input is already validated). */
export function draftTarget(input: { text: string }) {
  const parsed = parseSpec(input.text);
  return parsed.ok ? { newPipeline: parsed.spec.name, ownerTeamSlug: parsed.spec.owner } : null;
}
