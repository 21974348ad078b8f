// Pipelines: the fleet list and, per pipeline, what the version shown (else the serving one) is doing — run state, the
// engine's progress records and its dead letters. All reads (viewer); each answer is bounded.
import {
  ACTION_NAMES,
  ACTIONS,
  authorizeAction,
  findBatchProgress,
  findPipelines,
  getPipelineDetail,
  summarizeDeadLetters,
  type TAction,
} from "@sluice/services";
import { TRPCError, type TRPCRouterRecord } from "@trpc/server";
import { roleProcedure } from "../init";
import {
  ZPipelineBatchesInputSchema,
  ZPipelineNameInputSchema,
  ZPipelineShownInputSchema,
} from "./pipeline-router.types";

/** How many committed batches the pipeline page lists (`sluice status` shows the newest 5). */
const BATCHES_LISTED = 20;
/** Reason groups of dead letters on the pipeline page (the rows themselves are browsed through deadLetter.browse). */
const DEAD_LETTER_REASONS = 10;

function found<T>(value: T | null, pipeline: string): T {
  if (value === null) throw new TRPCError({ code: "NOT_FOUND", message: `No pipeline named "${pipeline}".` });
  return value;
}

export const pipelineRouter = {
  list: roleProcedure("viewer").query(({ ctx }) => findPipelines(ctx.db)),

  get: roleProcedure("viewer")
    .input(ZPipelineShownInputSchema)
    .query(async ({ ctx, input }) => found(await getPipelineDetail(ctx.db, input), input.pipeline)),

  /** Which changes the signed-in user may make to this pipeline, with the refusal when not: enables buttons (each procedure still decides). */
  may: roleProcedure("viewer")
    .input(ZPipelineNameInputSchema)
    .query(async ({ ctx, input }) => {
      const onPipeline = ACTION_NAMES.filter((a) => ACTIONS[a].target === "pipeline");
      const entries = await Promise.all(
        onPipeline.map(async (a) => {
          const d = await authorizeAction(ctx.db, ctx.user, a, { pipeline: input.pipeline });
          return [a, d.ok ? { ok: true as const } : { ok: false as const, message: d.message }] as const;
        }),
      );
      return Object.fromEntries(entries) as Partial<
        Record<TAction, { ok: true } | { ok: false; message: string }>
      >;
    }),

  batches: roleProcedure("viewer")
    .input(ZPipelineBatchesInputSchema)
    .query(async ({ ctx, input }) =>
      found(await findBatchProgress(ctx.db, { ...input, limit: BATCHES_LISTED }), input.pipeline),
    ),

  deadLetters: roleProcedure("viewer")
    .input(ZPipelineNameInputSchema)
    .query(async ({ ctx, input }) =>
      found(
        await summarizeDeadLetters(ctx.db, {
          pipeline: input.pipeline,
          reasons: DEAD_LETTER_REASONS,
          rows: 1,
        }),
        input.pipeline,
      ),
    ),
} satisfies TRPCRouterRecord;
