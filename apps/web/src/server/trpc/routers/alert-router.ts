// Alerts: reads for everyone signed in (the Alerts page, a pipeline's rules and history, the fleet's
// firing counts, notification deliveries — what receivers answered only to who runs the pipeline); acknowledging, resolving and silencing for operators (any
// pipeline) and owners (their teams'), rules for owners of the pipeline's team. Every change is
// audited by the service in its own transaction, with the signed-in user.
import type { PrismaClient } from "@sluice/db";
import {
  acknowledgeAlert,
  authorizeAction,
  createAlertRule,
  endSilence,
  findAlertNotifications,
  findAlerts,
  findFiringAlertsByPipeline,
  getPipelineAlerts,
  resolveAlert,
  silenceAlerts,
  updateAlertRule,
  withoutReceiverAnswers,
  ZFindAlertsInput,
  type TAlertActor,
  type TActor,
  type TAuditOrigin,
} from "@sluice/services";
import { TRPCError, type TRPCRouterRecord } from "@trpc/server";
import { actionProcedure, roleProcedure } from "../init";
import {
  ZAlertPipelineInputSchema,
  ZCreateAlertRuleSchema,
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

/**
 * Whether the caller runs this pipeline's alerts (its owners, operators, admins) — who may see what
 * receivers answered (docs/security.md). `null`: every pipeline's, i.e. operators and admins.
 */
async function respondsTo(db: PrismaClient, user: TActor, pipeline: string | null): Promise<boolean> {
  if (pipeline === null) return user.role === "operator" || user.role === "admin";
  return (await authorizeAction(db, user, "alert.respond", { pipeline })).ok;
}

const pipelineTarget = (input: { pipeline: string | null }) =>
  input.pipeline ? { pipeline: input.pipeline } : null;

export const alertRouter = {
  list: roleProcedure("viewer")
    .input(ZFindAlertsInput)
    .query(async ({ ctx, input }) => {
      const alerts = await findAlerts(ctx.db, input);
      // Receivers' answers per alert: only where the caller runs the alert's pipeline.
      const runs = new Map<string | null, Promise<boolean>>();
      const mayRun = (pipeline: string | null) => {
        if (!runs.has(pipeline)) runs.set(pipeline, respondsTo(ctx.db, ctx.user, pipeline));
        return runs.get(pipeline)!;
      };
      return Promise.all(
        alerts.map(async (a) => ((await mayRun(a.pipeline)) ? a : withoutReceiverAnswers(a))),
      );
    }),

  forPipeline: roleProcedure("viewer")
    .input(ZAlertPipelineInputSchema)
    .query(async ({ ctx, input }) => {
      const found = await getPipelineAlerts(ctx.db, input.pipeline);
      if (!found)
        throw new TRPCError({ code: "NOT_FOUND", message: `No pipeline named "${input.pipeline}".` });
      return (await respondsTo(ctx.db, ctx.user, input.pipeline)) ? found : withoutReceiverAnswers(found);
    }),

  firingByPipeline: roleProcedure("viewer").query(({ ctx }) => findFiringAlertsByPipeline(ctx.db)),

  // Every team's recent notifications: the receivers' answers for those who respond to every
  // pipeline's alerts (operators, admins).
  notifications: roleProcedure("viewer").query(async ({ ctx }) => {
    const found = await findAlertNotifications(ctx.db, { limit: 30 });
    return (await respondsTo(ctx.db, ctx.user, null)) ? found : withoutReceiverAnswers(found);
  }),

  acknowledge: actionProcedure("alert.respond", ZRespondToAlertSchema, pipelineTarget).mutation(
    ({ ctx, input }) => acknowledgeAlert(ctx.db, actorOf(ctx.user, ctx.from), input),
  ),

  resolve: actionProcedure("alert.respond", ZRespondToAlertSchema, pipelineTarget).mutation(
    ({ ctx, input }) => resolveAlert(ctx.db, actorOf(ctx.user, ctx.from), input),
  ),

  silence: actionProcedure("alert.respond", ZSilenceAlertsSchema, pipelineTarget).mutation(({ ctx, input }) =>
    silenceAlerts(ctx.db, actorOf(ctx.user, ctx.from), input),
  ),

  unsilence: actionProcedure("alert.respond", ZEndSilenceSchema, pipelineTarget).mutation(({ ctx, input }) =>
    endSilence(ctx.db, actorOf(ctx.user, ctx.from), input),
  ),

  updateRule: actionProcedure("alert.rules", ZUpdateAlertRuleSchema, (input) => ({
    pipeline: input.pipeline,
  })).mutation(({ ctx, input }) => updateAlertRule(ctx.db, actorOf(ctx.user, ctx.from), input)),

  // A rule watching one output of the pipeline (late_rate, violation_rate, state_growth): like changing
  // a rule, for the owners of the pipeline's team and admins; the service refuses an undeclared output.
  createRule: actionProcedure("alert.rules", ZCreateAlertRuleSchema, (input) => ({
    pipeline: input.pipeline,
  })).mutation(({ ctx, input }) => createAlertRule(ctx.db, actorOf(ctx.user, ctx.from), input)),
} satisfies TRPCRouterRecord;
