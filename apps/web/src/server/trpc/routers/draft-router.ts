// Authoring pipelines in the console: the editor's vocabulary and starting text, validation as you
// type, a dry run on a sample of the real topic, registering a draft as a pipeline or its next
// version, and the version history with diffs. Checking and reading history are reads (owners and
// admins write specs; everyone may read history); a dry run and registering need pipeline.register
// for the draft's team — the same decision the CLI asks. check and dryRun are queries sent as POST
// (the client's draft link): a spec does not fit in a URL.
import {
  authorizeAction,
  checkDraft,
  diffVersions,
  dryRunDraft,
  findVersionHistory,
  submitPipelineDraft,
} from "@sluice/services";
import { draftTemplate } from "@sluice/services/drafts/pure";
import { parseSpecOrThrow, specVocabulary } from "@sluice/pipeline-spec";
import { TRPCError, type TRPCRouterRecord } from "@trpc/server";
import { actionProcedure, roleProcedure } from "../init";
import {
  draftTarget,
  ZCheckDraftInput,
  ZDraftStartInputSchema,
  ZDryRunDraftInput,
  ZPipelineHistoryInputSchema,
  ZSubmitDraftInput,
  ZVersionDiffInputSchema,
} from "./draft-router.types";

export const draftRouter = {
  vocabulary: roleProcedure("viewer").query(() => specVocabulary()),

  start: roleProcedure("owner")
    .input(ZDraftStartInputSchema)
    .query(async ({ ctx, input }) => {
      if (input.pipeline) {
        const history = await findVersionHistory(ctx.db, input.pipeline);
        if (!history?.[0])
          throw new TRPCError({ code: "NOT_FOUND", message: `No pipeline named "${input.pipeline}".` });
        return { text: history[0].specYaml, from: `version ${history[0].version} of ${input.pipeline}` };
      }
      const owner = ctx.user.teams[0]?.slug;
      return {
        text: draftTemplate({ ...(owner ? { owner } : {}), ...(input.topic ? { topic: input.topic } : {}) }),
        from: "the ledger template",
      };
    }),

  check: roleProcedure("owner")
    .input(ZCheckDraftInput)
    .query(async ({ ctx, input }) => {
      const check = await checkDraft({ db: ctx.db, pool: ctx.dataPlane().pool }, input.text);
      if (!check.ok) return { ...check, notAllowed: null };
      // Said while typing, so nobody writes a whole spec for a team they cannot register for.
      const decision = await authorizeAction(ctx.db, ctx.user, "pipeline.register", {
        newPipeline: check.name,
        ownerTeamSlug: check.owner,
      });
      return { ...check, notAllowed: decision.ok ? null : decision.message };
    }),

  dryRun: actionProcedure("pipeline.register", ZDryRunDraftInput, draftTarget).query(
    async ({ ctx, input }) => {
      const result = await dryRunDraft(ctx.dataPlane(), parseSpecOrThrow(input.text), input.sample);
      if (!result.ok) throw new TRPCError({ code: "BAD_REQUEST", message: result.message });
      ctx.logger.info(
        { event: "draft.dry_run", userId: ctx.user.id, pipeline: result.topic, rows: result.inputRows },
        "dry run",
      );
      return result;
    },
  ),

  submit: actionProcedure("pipeline.register", ZSubmitDraftInput, draftTarget).mutation(
    async ({ ctx, input }) => {
      const spec = parseSpecOrThrow(input.text);
      const result = await submitPipelineDraft(
        { db: ctx.db, pool: ctx.dataPlane().pool },
        { spec, reason: input.reason, freshState: input.freshState, actor: ctx.user, from: ctx.from },
      );
      if (!result.ok)
        throw new TRPCError({
          code: result.code === "NEEDS_APPROVAL" ? "FORBIDDEN" : "CONFLICT",
          message: result.message,
        });
      ctx.logger.info(
        { event: "pipeline.register", userId: ctx.user.id, pipeline: result.name, version: result.version },
        "pipeline registered",
      );
      return result;
    },
  ),

  history: roleProcedure("viewer")
    .input(ZPipelineHistoryInputSchema)
    .query(async ({ ctx, input }) => {
      const history = await findVersionHistory(ctx.db, input.pipeline);
      if (!history)
        throw new TRPCError({ code: "NOT_FOUND", message: `No pipeline named "${input.pipeline}".` });
      return history;
    }),

  diff: roleProcedure("viewer")
    .input(ZVersionDiffInputSchema)
    .query(async ({ ctx, input }) => {
      const diff = await diffVersions(ctx.db, input.pipeline, input.from, input.to);
      if (!diff)
        throw new TRPCError({
          code: "NOT_FOUND",
          message: `"${input.pipeline}" has no version ${input.from} or ${input.to}.`,
        });
      return diff;
    }),
} satisfies TRPCRouterRecord;
