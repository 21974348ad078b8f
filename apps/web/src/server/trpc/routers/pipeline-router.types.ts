import { z } from "zod";

export const ZPipelineNameInputSchema = z.object({
  pipeline: z.string().min(1, "Name the pipeline").max(200),
});
export type TPipelineNameInput = z.infer<typeof ZPipelineNameInputSchema>;

/** A pipeline and the version the page shows (`?v=N`); without it, the serving one. */
export const ZPipelineShownInputSchema = ZPipelineNameInputSchema.extend({
  version: z.number().int().positive("a version number is 1 or more").optional(),
});
export const ZPipelineBatchesInputSchema = ZPipelineShownInputSchema;
export type TPipelineBatchesInput = z.infer<typeof ZPipelineBatchesInputSchema>;
