import { authenticateUser } from "@sluice/services";
import { TRPCError, type TRPCRouterRecord } from "@trpc/server";
import { endSessionCookie, issueSessionCookie } from "../../session/session";
import { publicProcedure, roleProcedure } from "../init";
import { ZSignInInputSchema } from "./auth-router.types";

export const authRouter = {
  signIn: publicProcedure.input(ZSignInInputSchema).mutation(async ({ ctx, input }) => {
    const user = await authenticateUser(ctx.db, input);
    if (!user) {
      ctx.logger.info({ event: "auth.sign_in_failed" }, "sign-in refused");
      // One message for unknown email and wrong password: the form must not reveal who has an account.
      throw new TRPCError({ code: "UNAUTHORIZED", message: "Wrong email or password." });
    }
    ctx.resHeaders.append("set-cookie", issueSessionCookie(user.id, ctx.https));
    ctx.logger.info({ event: "auth.signed_in", userId: user.id, role: user.role }, "signed in");
    return user;
  }),

  me: roleProcedure("viewer").query(({ ctx }) => ctx.user),

  signOut: roleProcedure("viewer").mutation(({ ctx }) => {
    ctx.resHeaders.append("set-cookie", endSessionCookie(ctx.https));
    ctx.logger.info({ event: "auth.signed_out", userId: ctx.user.id }, "signed out");
    return { signedOut: true };
  }),
} satisfies TRPCRouterRecord;
