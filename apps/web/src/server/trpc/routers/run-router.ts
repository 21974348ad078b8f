// Lifecycle commands on a pipeline version from the console — start, pause, resume, stop, restart — on
// the version the page shows (or the serving one), for operators (the whole fleet), owners (their teams' pipelines) and admins. Recorded in
// pipeline_run_transitions and the audit log with the signed-in user and their reason. A started or
// resumed version's first batch job is queued at once (ctx.scheduler); without Redis the workers'
// reconciler queues it within WORKER_RECONCILE_INTERVAL_MS.
import { commandPipeline } from "@sluice/services";
import { TRPCError, type TRPCRouterRecord } from "@trpc/server";
import { auditWho } from "../context";
import { actionProcedure } from "../init";
import { ZRunCommandSchema } from "./run-router.types";

export const runRouter = {
  command: actionProcedure("pipeline.lifecycle", ZRunCommandSchema, (input) => ({
    pipeline: input.pipeline,
  })).mutation(async ({ ctx, input }) => {
    const result = await commandPipeline(
      ctx.db,
      { ...input, actor: `user:${ctx.user.email}` },
      { audit: auditWho(ctx), ...(ctx.scheduler ? { scheduler: ctx.scheduler } : {}) },
    );
    if (!result)
      throw new TRPCError({
        code: "NOT_FOUND",
        message:
          input.version === undefined
            ? `Pipeline "${input.pipeline}" has no version yet: register its spec first (npx sluice start <spec.yaml>).`
            : `Pipeline "${input.pipeline}" has no version ${input.version}.`,
      });
    ctx.logger.info(
      {
        event: "pipeline.command",
        userId: ctx.user.id,
        pipeline: input.pipeline,
        command: input.command,
        version: result.version,
        phase: result.phase,
      },
      "lifecycle command",
    );
    return result;
  }),
} satisfies TRPCRouterRecord;
