// tRPC building blocks. Only auth.signIn is a publicProcedure; every other procedure is a
// roleProcedure(minRole), so each one states the least role allowed to call it.
import type { TRole } from "@sluice/services";
import { initTRPC, TRPCError } from "@trpc/server";
import superjson from "superjson";
import { ZodError, z } from "zod";
import { authorize } from "./authorize";
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

/** Anyone, signed in or not. Use only for signing in. */
export const publicProcedure = t.procedure;

/** Callers whose role is `minRole` or higher; `ctx.user` is then non-null. */
export function roleProcedure(minRole: TRole) {
  return t.procedure.use(({ ctx, next }) => {
    const decision = authorize(ctx.user, minRole);
    if (!decision.ok) throw new TRPCError({ code: decision.code, message: decision.message });
    return next({ ctx: { ...ctx, user: decision.user } });
  });
}
