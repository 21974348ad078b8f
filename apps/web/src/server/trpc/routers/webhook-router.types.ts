import { ZRequeueWebhookDeliveriesInput } from "@sluice/services";
import { z } from "zod";

export const ZWebhookPipelineInputSchema = z.object({
  pipeline: z.string().min(1, "Name the pipeline").max(200),
});

/** The service's input without the actor: that is always the signed-in user. */
export const ZWebhookRequeueInputSchema = ZRequeueWebhookDeliveriesInput.omit({ actor: true });
export type TWebhookRequeueInput = z.input<typeof ZWebhookRequeueInputSchema>;
