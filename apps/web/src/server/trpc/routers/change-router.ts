// Change requests: the queue (every signed-in user can follow it), asking for a checkpoint reset or a
// schema change (change.request; a schema change from a proposed spec's text, e.g. the draft the
// register panel could not register without approval), deciding (change.approve — operators and admins, never on their own request),
// cancelling one's own (change.cancel) and commenting. Procedures authorize, validate and call one
// service in @sluice/services change-requests/; refusals keep the service's message.
import {
  approveChangeRequest,
  cancelChangeRequest,
  commentOnChangeRequest,
  findChangeRequests,
  findCheckpointResets,
  findFixedQuarantine,
  findProducerFaults,
  getChangeRequest,
  rejectChangeRequest,
  requestCheckpointReset,
  requestSchemaChangeFromText,
  ZCommentChangeRequestInput,
  ZDecideChangeRequestInput,
  ZRequestCheckpointResetInput,
  ZRequestSchemaChangeInput,
} from "@sluice/services";
import { TRPCError, type TRPCRouterRecord } from "@trpc/server";
import { auditWho } from "../context";
import { actionProcedure, roleProcedure } from "../init";
import {
  ZChangeGetInputSchema,
  ZChangeListInputSchema,
  ZChangeResetsInputSchema,
} from "./change-router.types";

const onPipeline = (input: { pipeline: string }) => ({ pipeline: input.pipeline });

export const changeRouter = {
  list: roleProcedure("viewer")
    .input(ZChangeListInputSchema)
    .query(({ ctx, input }) => findChangeRequests(ctx.db, { ...input, withoutProducerFaults: true })),

  /** Values no declarable type holds, grouped per topic and field across pipelines and versions. */
  producerFaults: roleProcedure("viewer").query(({ ctx }) => findProducerFaults(ctx.db)),

  get: roleProcedure("viewer")
    .input(ZChangeGetInputSchema)
    .query(async ({ ctx, input }) => {
      const found = await getChangeRequest(ctx.db, input.id);
      if (!found) throw new TRPCError({ code: "NOT_FOUND", message: `No change request #${input.id}.` });
      return found;
    }),

  resets: roleProcedure("viewer")
    .input(ZChangeResetsInputSchema)
    .query(({ ctx, input }) => findCheckpointResets(ctx.db, input.pipeline)),

  requestReset: actionProcedure("change.request", ZRequestCheckpointResetInput, onPipeline).mutation(
    ({ ctx, input }) => {
      if (!ctx.topicOffsets)
        throw new TRPCError({
          code: "INTERNAL_SERVER_ERROR",
          message: "Kafka is not configured for the console (KAFKA_BROKERS)",
        });
      return requestCheckpointReset(ctx.db, ctx.topicOffsets, auditWho(ctx), input);
    },
  ),

  requestSchemaChange: actionProcedure("change.request", ZRequestSchemaChangeInput, onPipeline).mutation(
    ({ ctx, input }) => requestSchemaChangeFromText(ctx.db, auditWho(ctx), input),
  ),

  /** An applied schema change: the old version's quarantined rows the new contract accepts (offered for replay). */
  fixedQuarantine: roleProcedure("viewer")
    .input(ZChangeGetInputSchema)
    .query(({ ctx, input }) => findFixedQuarantine(ctx.db, input.id)),

  approve: actionProcedure("change.approve", ZDecideChangeRequestInput, onPipeline).mutation(
    ({ ctx, input }) =>
      approveChangeRequest(ctx.db, auditWho(ctx), input, ctx.scheduler ? { scheduler: ctx.scheduler } : {}),
  ),

  reject: actionProcedure("change.approve", ZDecideChangeRequestInput, onPipeline).mutation(
    ({ ctx, input }) => rejectChangeRequest(ctx.db, auditWho(ctx), input),
  ),

  cancel: actionProcedure("change.cancel", ZDecideChangeRequestInput, onPipeline).mutation(({ ctx, input }) =>
    cancelChangeRequest(ctx.db, { ...auditWho(ctx), isAdmin: ctx.user.role === "admin" }, input),
  ),

  comment: actionProcedure("change.comment", ZCommentChangeRequestInput, onPipeline).mutation(
    ({ ctx, input }) => commentOnChangeRequest(ctx.db, auditWho(ctx), input),
  ),
} satisfies TRPCRouterRecord;
