import { ZRolloutStart } from "@sluice/services";
import { z } from "zod";

export const ZRolloutGetInputSchema = z.object({ pipeline: z.string().min(1, "Name the pipeline").max(200) });

/** Start a rollout from a draft's text (the edit page's register panel). */
export const ZRolloutStartInputSchema = z.object({
  pipeline: z.string().min(1, "Name the pipeline").max(200),
  specText: z.string().min(1, "Paste the new version's spec").max(200_000),
  from: ZRolloutStart.default({ kind: "earliest" }),
  reason: z.string().trim().min(1, "Give a reason: the people approving the promotion read it").max(2000),
});
