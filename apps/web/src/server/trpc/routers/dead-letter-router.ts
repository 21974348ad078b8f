// Dead letters as a workflow: discarding rows with a reason, and replaying them through the serving
// version (operators for any pipeline, owners for their teams'). The services decide; this checks
// who may and passes the input on.
import { discardDeadLetters, requestDeadLetterReplay, ZDiscardDeadLettersInput, ZRequestDeadLetterReplayInput } from "@sluice/services";
import { TRPCError, type TRPCRouterRecord } from "@trpc/server";
import { auditWho } from "../context";
import { actionProcedure } from "../init";

export const deadLetterRouter = {
  discard: actionProcedure("deadletter.discard", ZDiscardDeadLettersInput, (input) => ({ pipeline: input.pipeline })).mutation(async ({ ctx, input }) => {
    const result = await discardDeadLetters(ctx.db, auditWho(ctx), input);
    if (!result) throw new TRPCError({ code: "NOT_FOUND", message: `Pipeline "${input.pipeline}" has no version yet.` });
    return result;
  }),
  replay: actionProcedure("deadletter.replay", ZRequestDeadLetterReplayInput, (input) => ({ pipeline: input.pipeline })).mutation(async ({ ctx, input }) => {
    const result = await requestDeadLetterReplay(ctx.db, auditWho(ctx), input);
    if (!result) throw new TRPCError({ code: "NOT_FOUND", message: `Pipeline "${input.pipeline}" has no version yet.` });
    return result;
  }),
} satisfies TRPCRouterRecord;
