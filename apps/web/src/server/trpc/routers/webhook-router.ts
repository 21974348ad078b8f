// Webhook deliveries: what the ledger holds per pipeline (viewers; the receivers' answers, which can
// say anything, only to the pipeline's owners and operators) and re-queueing failed deliveries
// once the receiver is fixed (operators for any pipeline, owners for their teams' pipelines: it causes
// external side effects again). The re-queue is recorded with the signed-in user as the actor; the
// workers running the pipeline do the sending.
import {
  authorizeAction,
  findWebhookDeliveries,
  requeueFailedWebhookDeliveries,
  summarizeWebhookDeliveries,
  withoutReceiverAnswers,
} from "@sluice/services";
import { TRPCError, type TRPCRouterRecord } from "@trpc/server";
import { auditWho } from "../context";
import { actionProcedure, roleProcedure } from "../init";
import { ZWebhookPipelineInputSchema, ZWebhookRequeueInputSchema } from "./webhook-router.types";

/** How many failed deliveries the console lists per pipeline (the CLI lists them all). */
const FAILED_LISTED = 20;

export const webhookRouter = {
  summary: roleProcedure("viewer").query(({ ctx }) => summarizeWebhookDeliveries(ctx.db)),

  failed: roleProcedure("viewer")
    .input(ZWebhookPipelineInputSchema)
    .query(async ({ ctx, input }) => {
      const found = await findWebhookDeliveries(ctx.db, {
        pipeline: input.pipeline,
        status: "failed",
        limit: FAILED_LISTED,
      });
      if (!found)
        throw new TRPCError({ code: "NOT_FOUND", message: `No pipeline named "${input.pipeline}".` });
      // The receivers' answers only to those who run this pipeline: the same people who may re-send.
      const mayRun = await authorizeAction(ctx.db, ctx.user, "webhook.requeue", { pipeline: input.pipeline });
      return mayRun.ok
        ? { ...found, receiverAnswers: "shown" as const }
        : {
            ...withoutReceiverAnswers(found),
            receiverAnswers: "hidden" as const,
            receiverAnswersHidden: `The receiver's answers are shown to the pipeline's owners and operators only: ${mayRun.message}`,
          };
    }),

  requeue: actionProcedure("webhook.requeue", ZWebhookRequeueInputSchema, (input) => ({
    pipeline: input.pipeline,
  })).mutation(async ({ ctx, input }) => {
    const result = await requeueFailedWebhookDeliveries(
      ctx.db,
      { ...input, actor: `user:${ctx.user.email}` },
      { audit: auditWho(ctx) },
    );
    ctx.logger.info(
      {
        event: "webhook.requeued",
        userId: ctx.user.id,
        pipeline: input.pipeline,
        key: input.key ?? null,
        requeued: result.requeued,
      },
      "webhook deliveries re-queued",
    );
    return result;
  }),
} satisfies TRPCRouterRecord;
