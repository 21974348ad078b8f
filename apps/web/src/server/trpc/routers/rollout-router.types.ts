import { ZStartRolloutInput } from "@sluice/services";
import { z } from "zod";

export const ZRolloutGetInputSchema = z.object({ pipeline: z.string().min(1, "Name the pipeline").max(200) });

/** Start a rollout from a draft's text (the edit page's register panel): the service's input, and the spec. */
export const ZRolloutStartInputSchema = ZStartRolloutInput.extend({
  pipeline: z.string().min(1, "Name the pipeline").max(200),
  specText: z.string().min(1, "Paste the new version's spec").max(200_000),
});
