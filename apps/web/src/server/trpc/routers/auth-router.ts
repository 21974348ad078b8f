// Who is signed in. Signing in, out and changing one's password are the auth library's endpoints
// (/api/auth/*, see src/server/auth/), not tRPC procedures.
import type { TRPCRouterRecord } from "@trpc/server";
import { roleProcedure } from "../init";

export const authRouter = {
  me: roleProcedure("viewer").query(({ ctx }) => ctx.user),
} satisfies TRPCRouterRecord;
