// Blue/green rollouts from the console: the rollout page's read (viewer), starting one from a draft
// (pipeline.register, like registering), asking for promotion (a change request another person
// approves on Change requests), rolling back and aborting (pipeline.lifecycle). Each procedure
// (reconciling on demand: pipeline.lifecycle) authorizes, validates and calls one service in @sluice/services rollouts/; refusals keep its message.
import { parseSpecOrThrow } from "@sluice/pipeline-spec";
import {
  abortRollout,
  findRolloutPage,
  reconcileRollout,
  requestPromotion,
  rollbackRollout,
  RolloutError,
  startRollout,
  ZRequestPromotionInput,
  ZRolloutStepInput,
} from "@sluice/services";
import { TRPCError, type TRPCRouterRecord } from "@trpc/server";
import { auditWho } from "../context";
import { actionProcedure, roleProcedure } from "../init";
import { ZRolloutGetInputSchema, ZRolloutStartInputSchema } from "./rollout-router.types";

const onPipeline = (input: { pipeline: string }) => ({ pipeline: input.pipeline });

export const rolloutRouter = {
  /** The pipeline's running rollout, else its newest; null when it never had one. */
  get: roleProcedure("viewer")
    .input(ZRolloutGetInputSchema)
    .query(({ ctx, input }) => findRolloutPage(ctx.db, ctx.dataPlane().pool, input.pipeline)),

  start: actionProcedure("pipeline.register", ZRolloutStartInputSchema, onPipeline).mutation(
    ({ ctx, input }) => {
      const spec = parseSpecOrThrow(input.specText);
      if (spec.name !== input.pipeline)
        throw new RolloutError(
          `the spec is for "${spec.name}", not "${input.pipeline}": a rollout changes this pipeline`,
          "invalid",
        );
      if (!ctx.topicOffsets)
        throw new TRPCError({
          code: "INTERNAL_SERVER_ERROR",
          message: "Kafka is not configured for the console (KAFKA_BROKERS)",
        });
      return startRollout(
        ctx.db,
        ctx.topicOffsets,
        auditWho(ctx),
        spec,
        { from: input.from, reason: input.reason, keepPreviousHours: input.keepPreviousHours },
        ctx.scheduler ? { scheduler: ctx.scheduler } : {},
      );
    },
  ),

  /** Reconciles the running rollout now (the workers do every minute) and returns what it stored. */
  reconcile: actionProcedure("pipeline.lifecycle", ZRolloutGetInputSchema, onPipeline).mutation(
    ({ ctx, input }) =>
      reconcileRollout(ctx.dataPlane().pool, ctx.db, input.pipeline, {
        actorUserId: ctx.user.id,
        actor: ctx.user.email,
      }),
  ),

  requestPromotion: actionProcedure("change.request", ZRequestPromotionInput, onPipeline).mutation(
    ({ ctx, input }) => requestPromotion(ctx.db, auditWho(ctx), input),
  ),

  rollback: actionProcedure("pipeline.lifecycle", ZRolloutStepInput, onPipeline).mutation(({ ctx, input }) =>
    rollbackRollout(ctx.db, auditWho(ctx), input, ctx.scheduler ? { scheduler: ctx.scheduler } : {}),
  ),

  abort: actionProcedure("pipeline.lifecycle", ZRolloutStepInput, onPipeline).mutation(({ ctx, input }) =>
    abortRollout(ctx.db, auditWho(ctx), input),
  ),
} satisfies TRPCRouterRecord;
