import { z } from "zod";

export const ZPipelineNameInputSchema = z.object({
  pipeline: z.string().min(1, "Name the pipeline").max(200),
});
export type TPipelineNameInput = z.infer<typeof ZPipelineNameInputSchema>;
