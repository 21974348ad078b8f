// tRPC building blocks. There is no public procedure (signing in and out is the auth library's, at
// /api/auth). Reads are roleProcedure(minRole); everything that changes something is an
// actionProcedure: both ask the one authorization decision in @sluice/services.
import type { TAction, TRole, TTargetRef } from "@sluice/services";
import { initTRPC } from "@trpc/server";
import superjson from "superjson";
import { ZodError, z } from "zod";
import { requireActionFor, requireActionRole, requireRole } from "./authorize";
import type { TTrpcContext } from "./context";

const t = initTRPC.context<TTrpcContext>().create({
  transformer: superjson,
  errorFormatter: ({ shape, error }) => {
    const invalid = error.cause instanceof ZodError ? error.cause : null;
    return {
      ...shape,
      // Invalid input: the readable messages (the field and the fix), not zod's JSON dump.
      message: invalid
        ? invalid.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")
        : error.code === "INTERNAL_SERVER_ERROR"
          ? "Something failed on the server; the console's log has the details."
          : shape.message,
      data: { ...shape.data, fieldErrors: invalid ? z.flattenError(invalid).fieldErrors : null },
    };
  },
});

export const createTrpcRouter = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Callers whose role is `minRole` or higher on the ladder; `ctx.user` is then non-null. */
export function roleProcedure(minRole: TRole) {
  return t.procedure.use(({ ctx, next }) => next({ ctx: { ...ctx, user: requireRole(ctx.user, minRole) } }));
}

/**
 * A change: signed in (401 otherwise) → a role that may do the action at all (403) → input validated
 * (400) → allowed on this target, i.e. the pipeline's team (403, or 404 for an unknown pipeline). `targetOf` names the
 * pipeline from the input; leave it out for actions on no pipeline (admin.*).
 */
export function actionProcedure<TSchema extends z.ZodType>(action: TAction, input: TSchema, targetOf?: (input: z.output<TSchema>) => TTargetRef) {
  return t.procedure
    .use(({ ctx, next }) => next({ ctx: { ...ctx, user: requireActionRole(ctx.user, action) } }))
    .input(input)
    .use(async ({ ctx, input, next }) =>
      next({ ctx: { ...ctx, user: await requireActionFor(ctx.db, ctx.user, action, targetOf ? targetOf(input as z.output<TSchema>) : null) } }),
    );
}
