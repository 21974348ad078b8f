// Dead letters as a workflow: discarding rows with a reason (operators for any pipeline, owners for
// their teams'). Replaying them is not built yet (docs/console.md says what exists).
import { discardDeadLetters, ZDiscardDeadLettersInput } from "@sluice/services";
import { TRPCError, type TRPCRouterRecord } from "@trpc/server";
import { auditWho } from "../context";
import { actionProcedure } from "../init";

export const deadLetterRouter = {
  discard: actionProcedure("deadletter.discard", ZDiscardDeadLettersInput, (input) => ({ pipeline: input.pipeline })).mutation(async ({ ctx, input }) => {
    const result = await discardDeadLetters(ctx.db, auditWho(ctx), input);
    if (!result) throw new TRPCError({ code: "NOT_FOUND", message: `Pipeline "${input.pipeline}" has no version yet.` });
    return result;
  }),
} satisfies TRPCRouterRecord;
