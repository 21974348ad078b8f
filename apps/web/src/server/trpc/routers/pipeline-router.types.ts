import { z } from "zod";

export const ZPipelineNameInputSchema = z.object({
  pipeline: z.string().min(1, "Name the pipeline").max(200),
});
export type TPipelineNameInput = z.infer<typeof ZPipelineNameInputSchema>;

export const ZPipelineBatchesInputSchema = ZPipelineNameInputSchema.extend({
  version: z.number().int().positive("a version number is 1 or more").optional(),
});
export type TPipelineBatchesInput = z.infer<typeof ZPipelineBatchesInputSchema>;
