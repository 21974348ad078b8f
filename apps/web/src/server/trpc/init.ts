// tRPC building blocks. There is no public procedure (signing in and out is the auth library's, at
// /api/auth). Reads are roleProcedure(minRole); everything that changes something is an
// actionProcedure: both ask the one authorization decision in @sluice/services.
import {
  recordAuditEvent,
  ServiceError,
  type TAction,
  type TRole,
  type TServiceErrorKind,
  type TTargetRef,
} from "@sluice/services";
import { initTRPC, TRPCError } from "@trpc/server";
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

/** What the person is told for each kind of service refusal (@sluice/services ServiceError). */
const REFUSAL_CODE = {
  not_found: "NOT_FOUND",
  conflict: "CONFLICT",
  invalid: "BAD_REQUEST",
  forbidden: "FORBIDDEN",
} as const satisfies Record<TServiceErrorKind, TRPCError["code"]>;

/**
 * Every procedure's first steps. A service's refusal (a ServiceError, thrown anywhere below) becomes
 * the tRPC error its kind names, with the service's own message — the one place that mapping is made,
 * so no router translates errors. And a NUL character anywhere in the input (a string or a key) is
 * refused with 400 naming where: Postgres cannot store it in text, so it would otherwise surface as a
 * 500 from whichever query met it first.
 */
const procedure = t.procedure
  .use(async ({ next }) => {
    const result = await next();
    const refusal = result.ok ? null : result.error.cause;
    if (refusal instanceof ServiceError)
      throw new TRPCError({ code: REFUSAL_CODE[refusal.kind], message: refusal.message, cause: refusal });
    return result;
  })
  .use(async ({ getRawInput, next }) => {
    const at = nulPath(await getRawInput().catch(() => undefined));
    if (at !== null)
      throw new TRPCError({
        code: "BAD_REQUEST",
        message: `${at || "input"}: contains a NUL character (\\u0000), which is not allowed in any text; remove it`,
      });
    return next();
  });

/** The path of the first string or key holding U+0000 ("" for the input itself), or null. */
export function nulPath(value: unknown, path = "", depth = 0): string | null {
  if (typeof value === "string") return value.includes("\u0000") ? path : null;
  if (value === null || typeof value !== "object" || depth > 64) return null;
  for (const [key, item] of Object.entries(value)) {
    const here = path ? `${path}.${key}` : key;
    if (key.includes("\u0000")) return here;
    const found = nulPath(item, here, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

/** Callers whose role is `minRole` or higher on the ladder; `ctx.user` is then non-null. */
export function roleProcedure(minRole: TRole) {
  return procedure.use(({ ctx, next }) => next({ ctx: { ...ctx, user: requireRole(ctx.user, minRole) } }));
}

/**
 * A change: signed in (401 otherwise) → a role that may do the action at all (403) → input validated
 * (400) → allowed on this target, i.e. the pipeline's team (403, or 404 for an unknown pipeline). `targetOf` names the
 * pipeline from the input; leave it out for actions on no pipeline (admin.*).
 */
export function actionProcedure<TSchema extends z.ZodType>(
  action: TAction,
  input: TSchema,
  targetOf?: (input: z.output<TSchema>) => TTargetRef,
) {
  return procedure
    .use(async ({ ctx, next, getRawInput }) => {
      // Refused before the input is validated: the raw input's pipeline (if any) only labels the audit event.
      const raw = (await getRawInput().catch(() => null)) as { pipeline?: unknown } | null;
      const named: TTargetRef =
        typeof raw?.pipeline === "string" ? { pipeline: raw.pipeline.slice(0, 200) } : null;
      return next({
        ctx: {
          ...ctx,
          user: await auditRefusal(ctx, action, named, () => requireActionRole(ctx.user, action)),
        },
      });
    })
    .input(input)
    .use(async ({ ctx, input, next }) => {
      const target = targetOf ? targetOf(input as z.output<TSchema>) : null;
      const user = await auditRefusal(ctx, action, target, () =>
        requireActionFor(ctx.db, ctx.user, action, target),
      );
      return next({ ctx: { ...ctx, user } });
    });
}

/**
 * A signed-in user refused an action (403/404) is history too: recorded as a refused event with the
 * refusal as its reason. Signed-out calls (401) are not: there is nobody to name.
 */
async function auditRefusal<T>(
  ctx: TTrpcContext,
  action: TAction,
  target: TTargetRef,
  decide: () => T | Promise<T>,
): Promise<T> {
  try {
    return await decide();
  } catch (err) {
    if (err instanceof TRPCError && ctx.user && (err.code === "FORBIDDEN" || err.code === "NOT_FOUND")) {
      const label =
        target && "pipeline" in target
          ? target.pipeline
          : target && "newPipeline" in target
            ? target.newPipeline
            : null;
      // A failure to record is logged, never turned into a different answer for the caller.
      await Promise.resolve()
        .then(() =>
          recordAuditEvent(ctx.db, {
            actorUserId: ctx.user!.id,
            actor: ctx.user!.email,
            action,
            outcome: "refused",
            target: label ? { type: "pipeline", label } : null,
            reason: err.message,
            from: ctx.from,
          }),
        )
        .catch((e: unknown) => ctx.logger.error({ err: e, action }, "could not record a refused action"));
    }
    throw err;
  }
}
