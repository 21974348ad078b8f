// Alerts: reads for everyone signed in (the Alerts page, a pipeline's rules and history, the fleet's
// firing counts, notification deliveries); acknowledging, resolving and silencing for operators (any
// pipeline) and owners (their teams'), rules for owners of the pipeline's team. Every change is
// audited by the service in its own transaction, with the signed-in user.
import {
  acknowledgeAlert,
  AlertChangeError,
  endSilence,
  findAlertNotifications,
  findAlerts,
  findFiringAlertsByPipeline,
  getPipelineAlerts,
  resolveAlert,
  silenceAlerts,
  updateAlertRule,
  ZFindAlertsInput,
  type TAlertActor,
  type TActor,
  type TAuditOrigin,
} from "@sluice/services";
import { TRPCError, type TRPCRouterRecord } from "@trpc/server";
import { actionProcedure, roleProcedure } from "../init";
import {
  ZAlertPipelineInputSchema,
  ZEndSilenceSchema,
  ZRespondToAlertSchema,
  ZSilenceAlertsSchema,
  ZUpdateAlertRuleSchema,
} from "./alert-router.types";

const actorOf = (user: TActor, from: TAuditOrigin): TAlertActor => ({
  userId: user.id,
  label: user.email,
  from,
});

/** A refusal the person can act on, with its message as is. */
async function change<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof AlertChangeError)) throw err;
    throw new TRPCError({
      code: err.kind === "not_found" ? "NOT_FOUND" : err.kind === "conflict" ? "CONFLICT" : "BAD_REQUEST",
      message: err.message,
    });
  }
}

const pipelineTarget = (input: { pipeline: string | null }) =>
  input.pipeline ? { pipeline: input.pipeline } : null;

export const alertRouter = {
  list: roleProcedure("viewer")
    .input(ZFindAlertsInput)
    .query(({ ctx, input }) => findAlerts(ctx.db, input)),

  forPipeline: roleProcedure("viewer")
    .input(ZAlertPipelineInputSchema)
    .query(async ({ ctx, input }) => {
      const found = await getPipelineAlerts(ctx.db, input.pipeline);
      if (!found)
        throw new TRPCError({ code: "NOT_FOUND", message: `No pipeline named "${input.pipeline}".` });
      return found;
    }),

  firingByPipeline: roleProcedure("viewer").query(({ ctx }) => findFiringAlertsByPipeline(ctx.db)),

  notifications: roleProcedure("viewer").query(({ ctx }) => findAlertNotifications(ctx.db, { limit: 30 })),

  acknowledge: actionProcedure("alert.respond", ZRespondToAlertSchema, pipelineTarget).mutation(
    ({ ctx, input }) => change(() => acknowledgeAlert(ctx.db, actorOf(ctx.user, ctx.from), input)),
  ),

  resolve: actionProcedure("alert.respond", ZRespondToAlertSchema, pipelineTarget).mutation(
    ({ ctx, input }) => change(() => resolveAlert(ctx.db, actorOf(ctx.user, ctx.from), input)),
  ),

  silence: actionProcedure("alert.respond", ZSilenceAlertsSchema, pipelineTarget).mutation(({ ctx, input }) =>
    change(() => silenceAlerts(ctx.db, actorOf(ctx.user, ctx.from), input)),
  ),

  unsilence: actionProcedure("alert.respond", ZEndSilenceSchema, pipelineTarget).mutation(({ ctx, input }) =>
    change(() => endSilence(ctx.db, actorOf(ctx.user, ctx.from), input)),
  ),

  updateRule: actionProcedure("alert.rules", ZUpdateAlertRuleSchema, (input) => ({
    pipeline: input.pipeline,
  })).mutation(({ ctx, input }) => change(() => updateAlertRule(ctx.db, actorOf(ctx.user, ctx.from), input))),
} satisfies TRPCRouterRecord;
