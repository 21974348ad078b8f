// Dead letters as a workflow: browsing them with filters and inspecting one row's raw bytes and decoded
// payload (reads, every signed-in role, like the rest of the pipeline page); discarding rows with a
// reason, and replaying them through the serving version (operators for any pipeline, owners for their
// teams'). The services decide; this checks who may and passes the input on.
import {
  browseDeadLetters,
  discardDeadLetters,
  inspectDeadLetter,
  requestDeadLetterReplay,
  ZBrowseDeadLettersInput,
  ZDiscardDeadLettersInput,
  ZInspectDeadLetterInput,
  ZRequestDeadLetterReplayInput,
} from "@sluice/services";
import { TRPCError, type TRPCRouterRecord } from "@trpc/server";
import { auditWho } from "../context";
import { actionProcedure, roleProcedure } from "../init";

export const deadLetterRouter = {
  browse: roleProcedure("viewer")
    .input(ZBrowseDeadLettersInput)
    .query(async ({ ctx, input }) => {
      const page = await browseDeadLetters(ctx.db, input);
      if (!page)
        throw new TRPCError({ code: "NOT_FOUND", message: `No pipeline named "${input.pipeline}".` });
      return page;
    }),

  inspect: roleProcedure("viewer")
    .input(ZInspectDeadLetterInput)
    .query(async ({ ctx, input }) => {
      const row = await inspectDeadLetter(ctx.db, input);
      if (!row)
        throw new TRPCError({
          code: "NOT_FOUND",
          message: `Pipeline "${input.pipeline}" has no dead letter #${input.id}.`,
        });
      return row;
    }),

  discard: actionProcedure("deadletter.discard", ZDiscardDeadLettersInput, (input) => ({
    pipeline: input.pipeline,
  })).mutation(async ({ ctx, input }) => {
    const result = await discardDeadLetters(ctx.db, auditWho(ctx), input);
    if (!result)
      throw new TRPCError({ code: "NOT_FOUND", message: `Pipeline "${input.pipeline}" has no version yet.` });
    return result;
  }),

  replay: actionProcedure("deadletter.replay", ZRequestDeadLetterReplayInput, (input) => ({
    pipeline: input.pipeline,
  })).mutation(async ({ ctx, input }) => {
    const result = await requestDeadLetterReplay(ctx.db, auditWho(ctx), input);
    if (!result)
      throw new TRPCError({ code: "NOT_FOUND", message: `Pipeline "${input.pipeline}" has no version yet.` });
    return result;
  }),
} satisfies TRPCRouterRecord;
