// Change requests: the queue (every signed-in user can follow it), asking for a checkpoint reset
// (change.request), deciding (change.approve — operators and admins, never on their own request),
// cancelling one's own (change.cancel) and commenting. Procedures authorize, validate and call one
// service in @sluice/services change-requests/; refusals keep the service's message.
import {
  approveChangeRequest,
  cancelChangeRequest,
  ChangeRequestError,
  commentOnChangeRequest,
  findChangeRequests,
  findCheckpointResets,
  getChangeRequest,
  rejectChangeRequest,
  requestCheckpointReset,
  ZCommentChangeRequestInput,
  ZDecideChangeRequestInput,
  ZRequestCheckpointResetInput,
} from "@sluice/services";
import { TRPCError, type TRPCRouterRecord } from "@trpc/server";
import { auditWho } from "../context";
import { actionProcedure, roleProcedure } from "../init";
import { ZChangeGetInputSchema, ZChangeListInputSchema, ZChangeResetsInputSchema } from "./change-router.types";

const CODE = { not_found: "NOT_FOUND", conflict: "CONFLICT", invalid: "BAD_REQUEST", forbidden: "FORBIDDEN" } as const;

async function answer<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ChangeRequestError) throw new TRPCError({ code: CODE[err.kind], message: err.message });
    throw err;
  }
}

const onPipeline = (input: { pipeline: string }) => ({ pipeline: input.pipeline });

export const changeRouter = {
  list: roleProcedure("viewer")
    .input(ZChangeListInputSchema)
    .query(({ ctx, input }) => findChangeRequests(ctx.db, input)),

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

  requestReset: actionProcedure("change.request", ZRequestCheckpointResetInput, onPipeline).mutation(({ ctx, input }) =>
    answer(() => {
      if (!ctx.topicOffsets) throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: "Kafka is not configured for the console (KAFKA_BROKERS)" });
      return requestCheckpointReset(ctx.db, ctx.topicOffsets, auditWho(ctx), input);
    }),
  ),

  approve: actionProcedure("change.approve", ZDecideChangeRequestInput, onPipeline).mutation(({ ctx, input }) => answer(() => approveChangeRequest(ctx.db, auditWho(ctx), input))),

  reject: actionProcedure("change.approve", ZDecideChangeRequestInput, onPipeline).mutation(({ ctx, input }) => answer(() => rejectChangeRequest(ctx.db, auditWho(ctx), input))),

  cancel: actionProcedure("change.cancel", ZDecideChangeRequestInput, onPipeline).mutation(({ ctx, input }) =>
    answer(() => cancelChangeRequest(ctx.db, { ...auditWho(ctx), isAdmin: ctx.user.role === "admin" }, input)),
  ),

  comment: actionProcedure("change.comment", ZCommentChangeRequestInput, onPipeline).mutation(({ ctx, input }) => answer(() => commentOnChangeRequest(ctx.db, auditWho(ctx), input))),
} satisfies TRPCRouterRecord;
